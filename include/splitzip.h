/*
 * splitzip.h — the whole public C API of SplitZip (lossless KV-cache compression for
 * disaggregated LLM serving; arXiv 2605.01708), in the style of nccl.h. Its parts, each
 * including the one below it:
 *  - splitzip_base.h: version, result codes, data types, error strings; the conventions every
 *    function's comment follows (units, alignment, host or stream semantics, errors, paper);
 *  - splitzip_codec.h: codebooks and calibration, the host codec, the device codec (paper §3);
 *  - splitzip_comm.h: the communicator, szSend/szRecv and groups (paper §4, App. B).
 * Programs include this header; the parts are installed beside it.
 */
#ifndef SPLITZIP_H_
#define SPLITZIP_H_

#include "splitzip_comm.h"

#endif /* SPLITZIP_H_ */
