// The Scatter algorithms (their rows are in algo/registry.cc, their default rules in
// core/selector.cc). The root's sendBuf holds n blocks of S = recvCount x element size; rank r's
// recvBuf gets block r, bitwise (bytes are moved, never interpreted). The root's sendBuf is only
// read; the other ranks' sendBufs are never touched (they may be NULL). In place (the root only,
// collectives.md 1.6): recvBuf == sendBuf + root*S, whose copy is then skipped.
#pragma once

#include "algo/context.h"
#include "algo/registry.h"

namespace hostccl::algo {

Status ScatterDirect(Context& ctx, const OpArgs& args);     // threads: each rank copies its block out of the root's
Status ScatterShm(Context& ctx, const OpArgs& args);        // processes of one host: the same over the mapped sendBuf
Status ScatterShmInline(Context& ctx, const OpArgs& args);  // processes, n x S <= 4 KiB: the root's arrival carries it
Status ScatterFlat(Context& ctx, const OpArgs& args);       // TCP: the root sends each rank its block
Status ScatterNode(Context& ctx, const OpArgs& args);       // several hosts: shm on the root's host, TCP to the others

}  // namespace hostccl::algo
