// Logging by level and subsystem, NCCL style: SZ_DEBUG=WARN|INFO|TRACE picks the level,
// SZ_DEBUG_SUBSYS=INIT,CODEC,... (or ALL, the default) the subsystems.
#pragma once

enum szDebugLevel { SZ_LOG_NONE = 0, SZ_LOG_WARN = 1, SZ_LOG_INFO = 2, SZ_LOG_TRACE = 3 };
enum szDebugSubsys {
  SZ_INIT = 0x1,
  SZ_CODEC = 0x2,
  SZ_KERNEL = 0x4,
  SZ_NET = 0x8,
  SZ_P2P = 0x10,  // the operations of szSend/szRecv: start, ready, slices, finish
  SZ_ALL = ~0
};

void szDebugLog(szDebugLevel level, unsigned long subsys, const char* file, int line,
                const char* fmt, ...) __attribute__((format(printf, 5, 6)));

#define WARN(...) szDebugLog(SZ_LOG_WARN, SZ_ALL, __FILE__, __LINE__, __VA_ARGS__)
#define INFO(subsys, ...) szDebugLog(SZ_LOG_INFO, (subsys), __FILE__, __LINE__, __VA_ARGS__)
#define TRACE(subsys, ...) szDebugLog(SZ_LOG_TRACE, (subsys), __FILE__, __LINE__, __VA_ARGS__)
