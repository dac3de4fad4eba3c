package safefile

// oNoFollow is no flag on windows, which has no O_NOFOLLOW: the lstat
// before an open and the check of what was opened still refuse a
// symlink that is there before the open.
const oNoFollow = 0
