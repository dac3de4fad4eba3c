package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/writable"
)

// TestEveryCommandDeclaresAccess: every runnable command, hidden or not,
// says whether it reads or writes the repository (access.go), so none is
// left to the default by being forgotten; the fast lease hooks declare
// what their kong commands do.
func TestEveryCommandDeclaresAccess(t *testing.T) {
	t.Parallel()
	model, err := cliModel()
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *kong.Node)
	leaves := 0
	walk = func(n *kong.Node) {
		var sub []*kong.Node
		for _, c := range n.Children {
			if c.Type == kong.CommandNode {
				sub = append(sub, c)
			}
		}
		if len(sub) == 0 && n.Type == kong.CommandNode {
			leaves++
			if !n.Target.CanAddr() {
				t.Errorf("custody %s: its command value cannot be addressed", strings.TrimPrefix(n.FullPath(), "custody "))
				return
			}
			if _, ok := n.Target.Addr().Interface().(declaresAccess); !ok {
				t.Errorf("custody %s (%s) does not declare whether it reads or writes the repository: add its access method in access.go", strings.TrimPrefix(n.FullPath(), "custody "), n.Target.Type())
			}
		}
		for _, c := range sub {
			walk(c)
		}
	}
	walk(model.Node)
	if leaves < 40 {
		t.Errorf("found %d commands; the walk missed some", leaves)
	}
	for _, hook := range []string{"session-start", "heartbeat", "session-end"} {
		c, _, ok := fastHook([]string{"hook", hook})
		if !ok {
			t.Fatalf("hook %s takes no fast path", hook)
		}
		if accessOf(c) != writes {
			t.Errorf("the fast hook %s does not declare that it writes", hook)
		}
	}
}

// TestAccessFollowsFlags: the commands whose flags decide declare by them:
// doctor reads unless --salvage, resource gc writes unless --dry-run,
// integrate and skill write unless they only check or print.
func TestAccessFollowsFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cmd  any
		want access
	}{
		{&DoctorCmd{}, reads}, {&DoctorCmd{Salvage: true}, writes},
		{&ResourceGCCmd{}, writes}, {&ResourceGCCmd{DryRun: true}, reads},
		{&IntegrateClaudeCmd{}, writes}, {&IntegrateClaudeCmd{Check: true}, reads},
		{&IntegrateCodexCmd{}, writes}, {&IntegrateCodexCmd{Check: true}, reads},
		{&SkillCmd{}, reads}, {&SkillCmd{Out: "d"}, writes}, {&SkillCmd{Out: "d", Check: true}, reads},
		{ListCmd{}, reads}, {NewCmd{}, writes}, {struct{}{}, writes},
	} {
		if got := accessOf(c.cmd); got != c.want {
			t.Errorf("accessOf(%#v) = %d, want %d", c.cmd, got, c.want)
		}
	}
}

// TestUnwritableIsDescribed: whatever wraps it, a write the file system
// refused is one read-only-file-system body naming the exact path and its
// mount (not-writable for permissions on a writable file system), and the
// command again as the retry; a permission error that is not about a
// read-only mount keeps its own description.
func TestUnwritableIsDescribed(t *testing.T) {
	t.Parallel()
	inv := invocation{args: []string{"finish", "x-1"}, command: "finish", access: writes}
	ro := &writable.Error{Path: "/m/r/.git/custody", Mount: "/m", ReadOnly: true, Err: syscall.EROFS}
	refused := describeIn(&refusedUnwritable{err: ro, command: "finish"}, inv)
	if refused.Code != string(machine.CodeReadOnlyFileSystem) || refused.Path != ro.Path || refused.Retry != "custody finish x-1" ||
		!strings.Contains(refused.Message, "mounted read-only at /m") || !strings.Contains(refused.Message, "nothing was changed") ||
		!strings.Contains(refused.Message, "remount /m read-write") {
		t.Errorf("refused up front: %+v", refused)
	}
	perm := describeIn(&refusedUnwritable{err: &writable.Error{Path: "/r/.git/custody", Err: syscall.EACCES}, command: "finish"}, inv)
	if perm.Code != string(machine.CodeNotWritable) || perm.Path != "/r/.git/custody" || !strings.Contains(perm.Message, "run custody as a user who may write /r/.git/custody") {
		t.Errorf("refused for permissions: %+v", perm)
	}
	deep := fmt.Errorf("resume: %w", &fs.PathError{Op: "open", Path: t.TempDir() + "/x", Err: syscall.EROFS})
	if b := describeIn(deep, inv); b.Code != string(machine.CodeReadOnlyFileSystem) || !strings.Contains(b.Message, "stopped at this write") {
		t.Errorf("a write refused later: %+v", b)
	}
	denied := fmt.Errorf("read it: %w", &fs.PathError{Op: "open", Path: t.TempDir() + "/x", Err: syscall.EACCES})
	if b := describeIn(denied, inv); b.Code == string(machine.CodeReadOnlyFileSystem) || b.Code == string(machine.CodeNotWritable) {
		t.Errorf("a permission error on a writable file system was taken for a read-only one: %+v", b)
	}
	if b := describeIn(errors.New("plain"), inv); b.Code != "error" {
		t.Errorf("a plain error: %+v", b)
	}
}
