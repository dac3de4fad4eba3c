package machine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSwitchBlock(t *testing.T) {
	t.Parallel()
	const id = "x-1a2b3c"
	live := Record{ID: id, State: StateActive, Path: "/r/.worktrees/x-1a2b3c"}
	finished := live
	finished.State = StateFinished
	gone := live
	gone.State = StateTombstoned
	odd := live
	odd.Path = "/r/a\nb\xff/.worktrees/x-1a2b3c"
	for _, tc := range []struct {
		name      string
		rec       Record
		state     PathState
		dir, link bool
		err       string
		want      *Refusal
	}{
		{name: "an active tree's directory", rec: live, state: PathPresent, dir: true},
		{name: "a finished tree's directory", rec: finished, state: PathPresent, dir: true},
		{name: "tombstoned, whatever is there", rec: gone, state: PathPresent, dir: true,
			want: &Refusal{Code: CodeWrongState, Path: live.Path, Retry: "custody list",
				Message: id + " is tombstoned: its tree was removed from " + live.Path + "; the shell stays where it is"}},
		{name: "unreadable", rec: live, state: PathUnknown, err: "permission denied",
			want: &Refusal{Code: CodePathUnknown, Path: live.Path, Retry: "custody switch " + id,
				Message: live.Path + " could not be observed: permission denied; the shell stays where it is"}},
		{name: "gone", rec: live, state: PathAbsent,
			want: &Refusal{Code: CodeWorktreeMissing, Path: live.Path, Retry: "custody show " + id,
				Message: id + "'s tree is gone from " + live.Path + "; the shell stays where it is"}},
		{name: "a symlink to a directory", rec: live, state: PathPresent, dir: false, link: true,
			want: &Refusal{Code: CodeSymlink, Path: live.Path, Retry: "custody show " + id,
				Message: live.Path + " is not a plain directory (a symbolic link or a file is there); the shell stays where it is"}},
		{name: "a file", rec: live, state: PathPresent,
			want: &Refusal{Code: CodeSymlink, Path: live.Path, Retry: "custody show " + id,
				Message: live.Path + " is not a plain directory (a symbolic link or a file is there); the shell stays where it is"}},
		{name: "a path of odd bytes stays on one line, exact in Path", rec: odd, state: PathAbsent,
			want: &Refusal{Code: CodeWorktreeMissing, Path: odd.Path, Retry: "custody show " + id,
				Message: EscapeControl(id + "'s tree is gone from " + odd.Path + "; the shell stays where it is")}},
	} {
		got := SwitchBlock(tc.rec, tc.state, tc.dir, tc.link, tc.err)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
