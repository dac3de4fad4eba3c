package main

import (
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/google/go-cmp/cmp"
)

// kongHook parses args as run does without the fast path: kong over the
// hook model. It returns the chosen command's struct and the globals, or
// ok false when kong refuses them (or would print help and exit).
func kongHook(t testing.TB, args []string) (cmd any, g Globals, ok bool) {
	t.Helper()
	model := commandModel(args)
	exited := false
	parser, err := kong.New(model, append(cliOptions(),
		kong.Writers(&strings.Builder{}, &strings.Builder{}),
		kong.Exit(func(int) { exited = true; panic(exitSignal{}) }),
		kong.Vars{"version": "custody"},
	)...)
	if err != nil {
		t.Fatal(err)
	}
	var kctx *kong.Context
	func() {
		defer func() {
			if p := recover(); p != nil {
				if _, isExit := p.(exitSignal); !isExit {
					panic(p)
				}
			}
		}()
		kctx, err = parser.Parse(args)
	}()
	if exited || err != nil {
		return nil, g, false
	}
	switch kctx.Command() {
	case "hook session-start", "hook heartbeat", "hook session-end":
		cmd = kctx.Selected().Target.Addr().Interface()
	default:
		return nil, g, false
	}
	g = modelGlobals(model)
	g.Version = false
	return cmd, g, true
}

// agree checks that whenever fastHook takes args, kong takes them too and
// sets exactly the same command, flags and globals.
func agree(t testing.TB, args []string) (fast bool) {
	t.Helper()
	fc, fg, ok := fastHook(args)
	if !ok {
		return false
	}
	kc, kg, kok := kongHook(t, args)
	if !kok {
		t.Fatalf("fastHook took %q, which kong refuses", args)
	}
	opts := cmp.AllowUnexported(HookSessionStartCmd{}, HookHeartbeatCmd{}, HookSessionEndCmd{}, hookSession{}, hookLeaseFlags{})
	if d := cmp.Diff(kc, any(fc), opts); d != "" {
		t.Fatalf("%q: the command differs from kong's (-kong +fast):\n%s", args, d)
	}
	if d := cmp.Diff(kg, fg); d != "" {
		t.Fatalf("%q: the globals differ from kong's (-kong +fast):\n%s", args, d)
	}
	return true
}

func TestFastHookAgreesWithKong(t *testing.T) {
	t.Parallel()
	taken := [][]string{
		{"hook", "heartbeat"},
		{"hook", "session-start"},
		{"hook", "session-end"},
		{"hook", "session-start", "--ensure"},
		{"hook", "session-start", "--ensure", "--lease", "2h", "--session", "s1", "--agent", "codex"},
		{"hook", "heartbeat", "--lease=45s", "--session=a=b", "--agent="},
		{"hook", "session-end", "--session", "x", "--json"},
		{"hook", "heartbeat", "-C", "/some/dir", "--lock-timeout", "500ms"},
		{"hook", "heartbeat", "--chdir=rel/dir", "--lock-timeout=3s"},
	}
	for _, args := range taken {
		if !agree(t, args) {
			t.Errorf("fastHook declined %q, a command line integrate writes or an agent passes", args)
		}
	}
	// Each of these goes to kong, which answers as it always did: help,
	// the version, usage errors, other commands.
	declined := [][]string{
		{}, {"hook"}, {"heartbeat"}, {"--json", "hook", "heartbeat"},
		{"hook", "worktree-create"}, {"hook", "worktree-remove"}, {"hook", "nope"},
		{"hook", "heartbeat", "--help"}, {"hook", "heartbeat", "-h"}, {"hook", "heartbeat", "--version"},
		{"hook", "heartbeat", "--ensure"}, {"hook", "session-end", "--lease", "1m"},
		{"hook", "heartbeat", "--lease", "soon"}, {"hook", "heartbeat", "--lease"},
		{"hook", "heartbeat", "--session", "--agent", "x"}, {"hook", "heartbeat", "--session", "a", "--session", "b"},
		{"hook", "heartbeat", "-C", "a", "--chdir", "b"}, {"hook", "heartbeat", "-C=dir"}, {"hook", "heartbeat", "-Cdir"},
		{"hook", "heartbeat", "--json=true"}, {"hook", "heartbeat", "--debug"}, {"hook", "heartbeat", "extra"},
		{"hook", "heartbeat", "--"}, {"hook", "session-start", "--ensure=false"},
	}
	for _, args := range declined {
		if _, _, ok := fastHook(args); ok {
			t.Errorf("fastHook took %q; kong must answer it", args)
		}
	}
}

// FuzzFastHook holds fastHook to kong's parse on arbitrary hook command
// lines: taking a line kong refuses, or reading it differently, fails.
func FuzzFastHook(f *testing.F) {
	for _, s := range []string{
		"heartbeat", "session-start --ensure --lease 2h", "session-end --session x --json",
		"heartbeat -C dir --lock-timeout 1s", "heartbeat --lease=0s", "heartbeat --lease -1s",
		"session-start --session= --agent=a", "heartbeat --lock-timeout=1h2m3s --chdir=.",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := append([]string{"hook"}, strings.Split(line, " ")...)
		if len(args) > 12 {
			return
		}
		agree(t, args)
	})
}
