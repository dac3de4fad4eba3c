package machine

import (
	"errors"
	"testing"
)

func TestResumeRefusals(t *testing.T) {
	t.Parallel()
	rec := Record{ID: "x-1a2b3c", Path: "/r/.worktrees/x-1a2b3c"}
	res := Resource{ID: "db x", Path: "/r/.worktrees/x-1a2b3c"}
	arch := Archive{ID: "-a1", Dir: "/r/.git/custody/archives/a1"}
	checkRefusals(t, []refusalCase{
		{"no continuation", NoContinuationRefusal(KindWorktree, "finish-removal", rec), &Refusal{Code: CodeResumeUnmatched, Path: rec.Path, Retry: "custody show x-1a2b3c",
			Message: `worktree resume decided "finish-removal" for x-1a2b3c, and nothing carries that decision out; custody will not guess`}},
		{"no continuation, a resource id to quote", NoContinuationRefusal(KindResource, "odd\naction", res), &Refusal{Code: CodeResumeUnmatched, Path: res.Path, Retry: "custody show 'db x'",
			Message: `resource resume decided "odd\naction" for db x, and nothing carries that decision out; custody will not guess`}},
		{"resume failed", ResumeFailedRefusal(arch, errors.New("read manifest: EIO")), &Refusal{Code: CodeResumeUnmatched, Path: arch.Dir, Retry: "custody resume",
			Message: "read manifest: EIO"}},
		{"stuck, unobserved", StuckUnobservedRefusal(arch, errors.New("lstat: EACCES")), &Refusal{Code: CodeObservationFailed, Path: arch.Dir, Retry: "custody show -a1",
			Message: "lstat: EACCES"}},
	})
}
