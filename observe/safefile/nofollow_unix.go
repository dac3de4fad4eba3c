//go:build unix

package safefile

import "syscall"

// oNoFollow makes an open fail (ELOOP) on a symlink at the final component.
const oNoFollow = syscall.O_NOFOLLOW
