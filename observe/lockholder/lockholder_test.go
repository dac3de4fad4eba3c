package lockholder

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLocks(t *testing.T) {
	t.Parallel()
	text := `1: FLOCK  ADVISORY  WRITE 1234 08:02:1311 0 EOF
2: -> FLOCK  ADVISORY  WRITE 77 08:02:1311 0 EOF
3: POSIX  ADVISORY  READ 5678 fd:01:42 0 EOF
4: OFDLCK ADVISORY  READ  -1 00:06:9 0 EOF
5: FLOCK  ADVISORY  WRITE notapid 08:02:1311 0 EOF
6: FLOCK  ADVISORY  WRITE 99 08:02 0 EOF
garbage
`
	want := []Lock{
		{PID: 1234, Write: true, Major: 8, Minor: 2, Inode: 1311},
		{PID: 5678, Write: false, Major: 0xfd, Minor: 1, Inode: 42},
	}
	if diff := cmp.Diff(want, ParseLocks([]byte(text))); diff != "" {
		t.Errorf("ParseLocks (-want +got):\n%s", diff)
	}
	if got := ParseLocks(nil); got != nil {
		t.Errorf("ParseLocks(nil) = %v", got)
	}
}
