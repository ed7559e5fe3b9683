// The communicator's configuration from szConfig_t and the SZ_* environment (comm_config.h).
#include "src/comm_config.h"

#include <cstdlib>
#include <cstring>
#include <strings.h>

#include "base/checks.h"
#include "base/param.h"
#include "codec/dtype.h"

namespace sz {

// szConfig_t as SplitZip 0.1.0 had it: everything before codebookMode.
static constexpr size_t kConfigBytes010 = offsetof(szConfig_t, codebookMode);

// The codebook: szConfig_t's mode and codebook (a field set wins over its variable), else
// SZ_CODEBOOK: auto (the default), default, or a codebook file, kept fixed.
static szResult_t resolveCodebook(const szConfig_t* c, CommConfig* out) {
  int mode = c && c->size > kConfigBytes010 ? c->codebookMode : -1;
  const szCodebook_t* given = c ? c->codebook : nullptr;
  if (mode == -1 && given != nullptr) mode = SZ_CODEBOOK_FIXED;
  const char* env = getenv("SZ_CODEBOOK");
  if (mode == -1 && env != nullptr && *env != '\0') {
    if (strcasecmp(env, "auto") == 0) {
      mode = SZ_CODEBOOK_AUTO;
    } else if (strcasecmp(env, "default") == 0) {
      mode = SZ_CODEBOOK_DEFAULT;
    } else {
      SZCHECK(szCodebookLoad(env, &out->codebook));
      mode = SZ_CODEBOOK_FIXED;
      given = &out->codebook;
    }
  }
  if (mode == -1) mode = SZ_CODEBOOK_AUTO;
  if (mode < SZ_CODEBOOK_AUTO || mode > SZ_CODEBOOK_FIXED)
    return szSetError(szInvalidArgument, "szConfig_t.codebookMode %d: use SZ_CODEBOOK_AUTO, _DEFAULT or _FIXED", mode);
  if (mode == SZ_CODEBOOK_FIXED && given == nullptr)
    return szSetError(szInvalidArgument, "SZ_CODEBOOK_FIXED needs szConfig_t.codebook");
  if (mode == SZ_CODEBOOK_DEFAULT && given != nullptr)
    return szSetError(szInvalidArgument, "szConfig_t.codebook given with SZ_CODEBOOK_DEFAULT");
  if (given != nullptr) out->codebook = *given;
  else SZCHECK(szCodebookDefault(szBfloat16, &out->codebook));
  out->followCodebook = mode == SZ_CODEBOOK_AUTO;
  SZCHECK(szCodebookValidate(&out->codebook));
  int bits = 4;
  szCodebookCodeBits(&out->codebook, &bits);
  // The slot kernels code BF16, FP32 and E5M2 with 4-bit codes only (format version 1), FP16 and
  // E4M3 with either width, as the CPU codec does.
  if (bits != 4 && deviceCodecType(out->codebook.type))
    return szSetError(szInvalidUsage, "the communicator's %s codebook has 3-bit codes (format version 2), which the "
                      "slot kernels do not decode for %s: give it a 4-bit codebook", szTypeName(out->codebook.type),
                      szTypeName(out->codebook.type));
  return szSuccess;
}

// An emulated link's GB/s from `var` (SZ_IPC_LINK_GBPS, SZ_TCP_LINK_GBPS), read at every init so
// that a program can give each communicator its own; 0 where unset.
static szResult_t emulatedLink(const char* var, double* gbps) {
  const char* e = getenv(var);
  *gbps = 0;
  if (e == nullptr) return szSuccess;
  char* end = nullptr;
  *gbps = strtod(e, &end);
  if (end == e || *end != '\0' || !(*gbps >= 0))
    return szSetError(szInvalidArgument, "%s=%s: a number of GB/s (0: no emulated link)", var, e);
  return szSuccess;
}

// SZ_AUTH_DATA (an AES-256-GMAC tag on every host slice) and SZ_ENCRYPT (AES-256-GCM: every host
// slice encrypted and tagged), 0 or 1; read at every init, as the link variables are, so that a
// program can give each communicator its own.
static szResult_t onOff(const char* var, bool* on) {
  const char* e = getenv(var);
  *on = e != nullptr && strcmp(e, "1") == 0;
  if (e != nullptr && *e != '\0' && strcmp(e, "0") != 0 && strcmp(e, "1") != 0)
    return szSetError(szInvalidArgument, "%s=%s: 0 or 1", var, e);
  return szSuccess;
}

szResult_t resolveConfig(const szConfig_t* c, CommConfig* out) {
  if (c != nullptr && (c->magic != SZ_CONFIG_MAGIC || (c->size != sizeof(szConfig_t) && c->size != kConfigBytes010)))
    return szSetError(szInvalidArgument, "szConfig_t not initialized with SZ_CONFIG_INITIALIZER");
  if (c != nullptr && c->version > SZ_VERSION_CODE)
    return szSetError(szInvalidArgument, "szConfig_t of SplitZip version %u, newer than this library (%u)",
                      c->version, (unsigned)SZ_VERSION_CODE);
  const char* wire = c && c->wire ? c->wire : getenv("SZ_WIRE");
  out->wire = wire != nullptr ? wire : "";  // empty: chosen at init from the ranks' placement
  out->codec = c && c->codec >= 0 ? c->codec : SZ_CODEC_AUTO;
  if (!(c && c->codec >= 0)) {
    if (const char* e = getenv("SZ_CODEC")) {
      if (strcasecmp(e, "on") == 0) out->codec = SZ_CODEC_ON;
      else if (strcasecmp(e, "off") == 0) out->codec = SZ_CODEC_OFF;
      else if (strcasecmp(e, "auto") != 0) return szSetError(szInvalidArgument, "SZ_CODEC=%s: use on, off or auto", e);
    }
  }
  if (out->codec < SZ_CODEC_OFF || out->codec > SZ_CODEC_AUTO)
    return szSetError(szInvalidArgument, "szConfig_t.codec %d: use SZ_CODEC_ON, _OFF or _AUTO", out->codec);
  SZCHECK(resolveCodebook(c, out));
  SZCHECK(emulatedLink("SZ_TCP_LINK_GBPS", &out->tcpLinkGBps));
  SZCHECK(emulatedLink("SZ_IPC_LINK_GBPS", &out->ipcLinkGBps));
  // The CPU codec's threads (host slices may be too small to ever read them): a bad value is
  // reported at init.
  szParamCpuThreads();
  szParamCpuParallelBytes();
  out->sliceBytes = c && c->sliceBytes ? c->sliceBytes : size_t(szParamSliceBytes());
  out->depth = c && c->pipelineDepth ? c->pipelineDepth : int(szParamPipelineDepth());
  out->timeoutMs = c && c->timeoutMs ? c->timeoutMs : int(szParamTimeoutMs());
  out->blocking = !(c && c->blocking == 0);
  out->crc = c && c->crc >= 0 ? c->crc != 0 : szParamCrc() != 0;
  SZCHECK(onOff("SZ_AUTH_DATA", &out->authData));
  bool atInit = false;  // SZ_RUNTIME_CONNECT=0
  if (const char* e = getenv("SZ_RUNTIME_CONNECT")) atInit = strcmp(e, "0") == 0;
  bool atRun = true;
  SZCHECK(onOff("SZ_RUNTIME_CONNECT", &atRun));  // validates 0 or 1
  out->runtimeConnect = !atInit;
  SZCHECK(onOff("SZ_ENCRYPT", &out->encrypt));
  if (out->sliceBytes < 1024 || out->sliceBytes > (size_t(1) << 30) || out->depth < 1 || out->depth > 64 ||
      out->timeoutMs < 1)
    return szSetError(szInvalidArgument, "slice bytes %zu (1024 to 1 GiB), pipeline depth %d (1..64), timeout %d ms (> 0)",
                      out->sliceBytes, out->depth, out->timeoutMs);
  return szSuccess;
}

double emulatedLinkGBps(const CommConfig& cfg, const szWire* w) {
  return strcmp(w->name, "tcp") == 0 ? cfg.tcpLinkGBps : strcmp(w->name, "ipc") == 0 ? cfg.ipcLinkGBps : 0;
}

}  // namespace sz
