//go:build unix

package observe

import "syscall"

// oNoFollow makes an open fail on a symlink at the final component.
const oNoFollow = syscall.O_NOFOLLOW
