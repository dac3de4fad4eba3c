package hostio

// ONoFollow is no flag on windows, which has no O_NOFOLLOW; custody does
// not run commands there (see runnableHere), so nothing relies on it.
const ONoFollow = 0
