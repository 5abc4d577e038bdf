// Events (aclrtEvent): records are stream tasks that take a CLOCK_MONOTONIC timestamp.
//
// Contract:
//  - Every aclrtRecordEvent is a numbered occurrence; its task marks it complete when it runs.
//  - aclrtStreamWaitEvent makes the stream wait (as a task) for the event's latest occurrence
//    recorded at the time of the call; for an event never recorded, or reset since its last
//    record, it waits for the next record. The wait is bounded by TaskWaitBoundMs() (then the
//    task fails with Code::kTimeout) and gives up when its stream is destroyed.
//  - aclrtSynchronizeEvent returns at once for an event never recorded (or reset); else it waits,
//    bounded by TaskWaitBoundMs() (kAclRtEventSyncTimeout).
//  - aclrtResetEvent takes effect when called (not as a stream task).
//  - Handles are registered; events stay alive while a pending task refers to them.
#pragma once

#include <cstdint>

namespace hostccl::rt {

int CreateEvent(void** event, uint32_t flags);
int DestroyEvent(void* event);
int RecordEvent(void* event, void* stream);
int ResetEvent(void* event, void* stream);
int SynchronizeEvent(void* event);
int StreamWaitEvent(void* stream, void* event);
int EventElapsedTime(float* ms, void* start, void* end);
// Completion state without waiting: 1 = complete (or never recorded), 0 = pending; <0 on a bad handle.
int QueryEventComplete(void* event);

}  // namespace hostccl::rt
