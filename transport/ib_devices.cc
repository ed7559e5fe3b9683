// Port selection (ib_devices.h). GID types come from sysfs, as in NCCL (older rdma-core has no
// verb for them).
#include "transport/ib_devices.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/checks.h"
#include "base/param.h"
#include "transport/ib_gid.h"
#include "transport/ib_hca.h"

namespace {

szIbGidType gidType(const char* device, int port, int index) {
  char path[256];
  snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d", device, port, index);
  FILE* f = fopen(path, "r");
  if (f == nullptr) return kSzIbGidNone;
  char text[32] = {0};
  const bool got = fgets(text, sizeof(text), f) != nullptr;
  fclose(f);
  if (!got) return kSzIbGidNone;  // an empty entry reads as an error
  return strncmp(text, "RoCE v2", 7) == 0 ? kSzIbGidRoceV2 : kSzIbGidIbOrRoceV1;
}

// Fills the port's addressing: LID, GID index and GID.
szResult_t address(const szIbVerbs* v, const ibv_port_attr& attr, szIbPort* p) {
  const char* device = v->getDeviceName(p->context->device);
  std::vector<szIbGidEntry> table(size_t(attr.gid_tbl_len > 0 ? attr.gid_tbl_len : 0));
  for (size_t i = 0; p->roce && i < table.size(); ++i) {
    ibv_gid gid{};
    table[i].type = v->queryGid(p->context, uint8_t(p->port), int(i), &gid) == 0 ? gidType(device, p->port, int(i))
                                                                               : kSzIbGidNone;
    memcpy(table[i].raw, gid.raw, 16);
  }
  const int wanted = int(szParamIbGidIndex());
  p->gidIndex = szIbPickGidIndex(table, p->roce, wanted);
  if (p->gidIndex < 0)
    return szSetError(szInvalidUsage, wanted >= 0 ? "ib wire: %s: SZ_IB_GID_INDEX=%d names no GID of the port"
                                                  : "ib wire: %s: no RoCE v2 GID (%d: none asked); set SZ_IB_GID_INDEX",
                      p->name.c_str(), wanted);
  if (v->queryGid(p->context, uint8_t(p->port), p->gidIndex, &p->gid) != 0)
    return szSetError(szSystemError, "ib wire: %s: ibv_query_gid(%d) failed", p->name.c_str(), p->gidIndex);
  p->lid = attr.lid;
  p->mtu = attr.active_mtu;
  return szSuccess;
}

szResult_t openPort(const szIbVerbs* v, ibv_device* dev, int port, const ibv_device_attr& devAttr,
                    const ibv_port_attr& attr, szIbPort* p) {
  const char* name = v->getDeviceName(dev);
  p->name = std::string(name) + ":" + std::to_string(port);
  p->port = port;
  p->roce = attr.link_layer == IBV_LINK_LAYER_ETHERNET;
  p->maxQpWr = uint32_t(devAttr.max_qp_wr);
  p->maxCqe = uint32_t(devAttr.max_cqe);
  p->context = v->openDevice(dev);
  if (p->context == nullptr) return szSetError(szSystemError, "ib wire: cannot open %s", name);
  p->pd = v->allocPd(p->context);
  if (p->pd == nullptr) return szSetError(szSystemError, "ib wire: %s: ibv_alloc_pd failed", p->name.c_str());
  return address(v, attr, p);
}

// Adds the selected active ports of `dev`; `found` lists every port seen, for the message.
szResult_t addDevice(const szIbVerbs* v, ibv_device* dev, const szIbHcaFilter& filter, std::vector<szIbPort>* ports,
                     std::string* found) {
  const char* name = v->getDeviceName(dev);
  ibv_context* ctx = v->openDevice(dev);
  if (ctx == nullptr) {
    *found += std::string(" ") + name + " (cannot be opened)";
    return szSuccess;
  }
  ibv_device_attr devAttr{};
  const bool queried = v->queryDevice(ctx, &devAttr) == 0;
  std::vector<std::pair<int, ibv_port_attr>> active;
  for (int port = 1; queried && port <= devAttr.phys_port_cnt; ++port) {
    ibv_port_attr attr{};
    if (v->queryPort(ctx, uint8_t(port), &attr) != 0) continue;
    const bool up = attr.state == IBV_PORT_ACTIVE;
    *found += " " + std::string(name) + ":" + std::to_string(port) + (up ? "" : " (down)");
    if (up && szIbHcaSelected(filter, name, port)) active.emplace_back(port, attr);
  }
  v->closeDevice(ctx);
  for (const auto& [port, attr] : active) {
    if (ports->size() == size_t(kSzIbMaxPorts)) break;
    ports->emplace_back();
    SZCHECK(openPort(v, dev, port, devAttr, attr, &ports->back()));
  }
  return szSuccess;
}

}  // namespace

szResult_t szIbOpenPorts(const szIbVerbs* v, std::vector<szIbPort>* ports) {
  szIbHcaFilter filter;
  const char* spec = getenv("SZ_IB_HCA");
  SZCHECK(szIbParseHcaFilter(spec, &filter));
  int n = 0;
  ibv_device** list = v->getDeviceList(&n);
  if (list == nullptr || n == 0) {
    if (list) v->freeDeviceList(list);
    return szSetError(szInvalidUsage, "wire 'ib': this machine has no RDMA device (libibverbs lists none: no "
                      "InfiniBand or RoCE NIC, or its driver is not loaded); use SZ_WIRE=tcp");
  }
  std::string found;
  szResult_t res = szSuccess;
  for (int i = 0; i < n && res == szSuccess; ++i) res = addDevice(v, list[i], filter, ports, &found);
  v->freeDeviceList(list);
  if (res == szSuccess && ports->empty())
    res = szSetError(szInvalidUsage, "wire 'ib': no active RDMA port%s%s (found:%s)", spec ? " matches SZ_IB_HCA=" : "",
                     spec ? spec : "", found.c_str());
  if (res != szSuccess) szIbClosePorts(v, ports);
  return res;
}

void szIbClosePorts(const szIbVerbs* v, std::vector<szIbPort>* ports) {
  for (szIbPort& p : *ports) {
    if (p.pd) v->deallocPd(p.pd);
    if (p.context) v->closeDevice(p.context);
  }
  ports->clear();
}
