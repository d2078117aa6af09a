// The worker threads that run asynchronous executions. One process-wide
// queue, started on first use and never stopped (the library is never
// unloaded, and a worker may be running user work at exit).
#pragma once

#include <functional>

namespace kiln {

// Queues `work` to run on a worker thread. Work items run concurrently up to
// the number of workers (one per hardware thread, at least two, at most
// eight: an execution parallelises itself on its backend's own threads, so
// the workers only let independent executions overlap), in FIFO start order.
// `work` must not throw.
void RunInBackground(std::function<void()> work);

}  // namespace kiln
