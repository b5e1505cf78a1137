#pragma once
// LeakCheckPause: while one is alive, LeakSanitizer does not report what this thread
// allocates. Open MPI keeps what MPI_Init and MPI_Finalize allocate (component tables,
// hwloc topologies, argv copies) until the process exits and unloads the component
// libraries first, so their leak reports carry no stack a suppression could match. The MPI
// start and end calls run under a pause so that the ASan build keeps leak checking on for
// parplan's own code in MPI processes. A no-op in builds without AddressSanitizer.
#if defined(__SANITIZE_ADDRESS__)
#define PARPLAN_HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PARPLAN_HAVE_LSAN 1
#endif
#endif

#if defined(PARPLAN_HAVE_LSAN)
#include <sanitizer/lsan_interface.h>
#endif

namespace parplan {

class LeakCheckPause {
 public:
#if defined(PARPLAN_HAVE_LSAN)
  LeakCheckPause() { __lsan_disable(); }
  ~LeakCheckPause() { __lsan_enable(); }
#else
  // User-provided (not = default), so that a scoped pause is not an unused variable.
  LeakCheckPause() {}   // NOLINT(modernize-use-equals-default)
  ~LeakCheckPause() {}  // NOLINT(modernize-use-equals-default)
#endif
  LeakCheckPause(const LeakCheckPause&) = delete;
  LeakCheckPause& operator=(const LeakCheckPause&) = delete;
};

}  // namespace parplan
