//go:build unix

package hostio

import "syscall"

// oNoFollow makes an open fail on a symlink at the final component.
const ONoFollow = syscall.O_NOFOLLOW
