package machine_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

// TestDecideLease: every rule of a session's lease, as a table.
func TestDecideLease(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	const dur = 30 * time.Minute
	active := machine.Record{ID: "w-1", State: machine.StateActive, Path: "/r/.worktrees/w-1"}
	finished := active
	finished.State = machine.StateFinished
	removing := active
	removing.State = machine.StateRemoving
	lease := func(holder string, expires time.Duration) *machine.Lease {
		return &machine.Lease{Record: "w-1", Holder: holder, Expires: now.Add(expires)}
	}
	fresh := lease("s1", dur)
	type want struct {
		Outcome machine.LeaseOutcome
		Put     *machine.Lease
		Drop    bool
		Code    machine.Code
		Retry   string
	}
	for _, c := range []struct {
		name string
		rec  machine.Record
		cur  *machine.Lease
		op   machine.LeaseOp
		want want
	}{
		{"acquire free", active, nil, machine.LeaseAcquire, want{Outcome: machine.LeaseAcquired, Put: fresh}},
		{"acquire over an expired lease of another", active, lease("s2", -time.Second), machine.LeaseAcquire, want{Outcome: machine.LeaseAcquired, Put: fresh}},
		{"acquire at the instant another's expires", active, lease("s2", 0), machine.LeaseAcquire, want{Outcome: machine.LeaseAcquired, Put: fresh}},
		{"acquire under another's live lease", active, lease("s2", time.Second), machine.LeaseAcquire,
			want{Outcome: machine.LeaseRefused, Code: machine.CodeLeaseHeld, Retry: "custody show w-1"}},
		{"acquire again, just renewed", active, lease("s1", dur-time.Minute), machine.LeaseAcquire, want{Outcome: machine.LeaseUnchanged}},
		{"acquire own expired lease", active, lease("s1", -time.Hour), machine.LeaseAcquire, want{Outcome: machine.LeaseAcquired, Put: fresh}},
		{"acquire on a finished tree", finished, nil, machine.LeaseAcquire,
			want{Outcome: machine.LeaseRefused, Code: machine.CodeWrongState, Retry: "custody reopen w-1"}},
		{"acquire on a tree being removed", removing, nil, machine.LeaseAcquire,
			want{Outcome: machine.LeaseRefused, Code: machine.CodeWrongState, Retry: "custody show w-1"}},
		{"renew free", active, nil, machine.LeaseRenew, want{Outcome: machine.LeaseAcquired, Put: fresh}},
		{"renew before a tenth has passed", active, lease("s1", dur-dur/10+time.Second), machine.LeaseRenew, want{Outcome: machine.LeaseUnchanged}},
		{"renew exactly a tenth after the write", active, lease("s1", dur-dur/10), machine.LeaseRenew, want{Outcome: machine.LeaseUnchanged}},
		{"renew past a tenth", active, lease("s1", dur-dur/10-time.Second), machine.LeaseRenew, want{Outcome: machine.LeaseRenewed, Put: fresh}},
		{"renew never shortens a longer lease", active, lease("s1", 2*time.Hour), machine.LeaseRenew, want{Outcome: machine.LeaseUnchanged}},
		{"renew another's live lease", active, lease("s2", time.Minute), machine.LeaseRenew,
			want{Outcome: machine.LeaseRefused, Code: machine.CodeLeaseHeld, Retry: "custody show w-1"}},
		{"renew on a finished tree", finished, lease("s1", time.Minute), machine.LeaseRenew,
			want{Outcome: machine.LeaseRefused, Code: machine.CodeWrongState, Retry: "custody reopen w-1"}},
		{"release own", active, lease("s1", time.Minute), machine.LeaseRelease, want{Outcome: machine.LeaseReleased, Drop: true}},
		{"release own expired", active, lease("s1", -time.Minute), machine.LeaseRelease, want{Outcome: machine.LeaseReleased, Drop: true}},
		{"release own on a finished tree", finished, lease("s1", -time.Minute), machine.LeaseRelease, want{Outcome: machine.LeaseReleased, Drop: true}},
		{"release none", active, nil, machine.LeaseRelease, want{Outcome: machine.LeaseNotHeld}},
		{"release another's expired", active, lease("s2", -time.Minute), machine.LeaseRelease, want{Outcome: machine.LeaseNotHeld}},
		{"release another's live", active, lease("s2", time.Minute), machine.LeaseRelease,
			want{Outcome: machine.LeaseRefused, Code: machine.CodeLeaseHeld, Retry: "custody show w-1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := machine.DecideLease(c.rec, c.cur, machine.LeaseRequest{Op: c.op, Session: "s1", Now: now, Duration: dur})
			got := want{Outcome: d.Outcome, Put: d.Put, Drop: d.Drop}
			if d.Refusal != nil {
				got.Code, got.Retry = d.Refusal.Code, d.Refusal.Retry
				if d.Refusal.Path != c.rec.Path || !strings.Contains(d.Refusal.Message, c.rec.ID) {
					t.Errorf("refusal %+v does not name the tree %s at %s", d.Refusal, c.rec.ID, c.rec.Path)
				}
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("DecideLease (-want +got):\n%s", diff)
			}
			if d.Writes() != (c.want.Put != nil || c.want.Drop) {
				t.Errorf("Writes() = %v", d.Writes())
			}
		})
	}
}

// TestLeaseExpiryMakesRemovable: a lease DecideLease writes keeps an
// active tree out of plan until exactly its expiry (Removable).
func TestLeaseExpiryMakesRemovable(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	rec := machine.Record{ID: "w-1", State: machine.StateActive}
	d := machine.DecideLease(rec, nil, machine.LeaseRequest{Op: machine.LeaseAcquire, Session: "s", Now: now, Duration: time.Hour})
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{{0, false}, {time.Hour - time.Nanosecond, false}, {time.Hour, true}, {2 * time.Hour, true}} {
		if got := machine.Removable(rec, d.Put, now.Add(c.at)); got != c.want {
			t.Errorf("Removable at +%s = %v, want %v", c.at, got, c.want)
		}
	}
}

// TestValidSession: the session ids a hook accepts.
func TestValidSession(t *testing.T) {
	t.Parallel()
	for s, ok := range map[string]bool{
		"": false, "abc-123": true, strings.Repeat("x", 256): true, strings.Repeat("x", 257): false,
		"a\nb": false, "a\x1b[2J": false, "7f0e1c2a-0000-4000-8000-000000000000": true,
	} {
		if err := machine.ValidSession(s); (err == nil) != ok {
			t.Errorf("ValidSession(%q) = %v, want ok %v", s, err, ok)
		}
	}
}

// TestParseHookPayload: Claude Code's payloads, the generic shape, and
// what is refused.
func TestParseHookPayload(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, in string
		want     machine.HookPayload
		err      string
	}{
		{"empty", " \n", machine.HookPayload{}, ""},
		{"claude session start", `{"session_id":"abc","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"SessionStart","source":"startup"}`,
			machine.HookPayload{Session: "abc", Cwd: "/w", Event: "SessionStart"}, ""},
		{"claude post tool use", `{"session_id":"abc","cwd":"/w","hook_event_name":"PostToolUse","tool_input":{"file_path":"/x"},"tool_response":[1,2]}`,
			machine.HookPayload{Session: "abc", Cwd: "/w", Event: "PostToolUse"}, ""},
		{"claude worktree create", `{"session_id":"abc","cwd":"/r","hook_event_name":"WorktreeCreate","name":"fix-login"}`,
			machine.HookPayload{Session: "abc", Cwd: "/r", Event: "WorktreeCreate", Name: "fix-login"}, ""},
		{"worktree_name", `{"worktree_name":"x"}`, machine.HookPayload{Name: "x"}, ""},
		{"claude worktree remove", `{"session_id":"abc","cwd":"/r","hook_event_name":"WorktreeRemove","worktree_path":"/r/.worktrees/x"}`,
			machine.HookPayload{Session: "abc", Cwd: "/r", Event: "WorktreeRemove", WorktreePath: "/r/.worktrees/x"}, ""},
		{"generic", `{"session":"s9","cwd":"/w","agent":"aider"}`, machine.HookPayload{Session: "s9", Cwd: "/w", Agent: "aider"}, ""},
		{"session_id wins", `{"session":"b","session_id":"a"}`, machine.HookPayload{Session: "a"}, ""},
		{"null fields", `{"session_id":null,"session":"b"}`, machine.HookPayload{Session: "b"}, ""},
		{"not an object", `["a"]`, machine.HookPayload{}, "not a JSON object"},
		{"garbage", "\x00\xff", machine.HookPayload{}, "not a JSON object"},
		{"number session", `{"session_id":7}`, machine.HookPayload{}, "not a JSON object of strings"},
		{"truncated", `{"session_id":"a"`, machine.HookPayload{}, "not a JSON object of strings"},
		{"two values", `{} {}`, machine.HookPayload{}, "more than one JSON value"},
		{"stray brace", `{"session_id":"a"}}`, machine.HookPayload{}, "more than one JSON value"},
		{"stray bracket", `{"session_id":"a"}]`, machine.HookPayload{}, "more than one JSON value"},
		{"too large", `{"x":"` + strings.Repeat("y", machine.MaxHookPayload) + `"}`, machine.HookPayload{}, "larger than"},
	} {
		got, err := machine.ParseHookPayload([]byte(c.in))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

// FuzzParseHookPayload: any stdin gives a payload or an error, never a
// panic, and a payload's fields round-trip through the generic shape.
func FuzzParseHookPayload(f *testing.F) {
	for _, s := range []string{"", "{}", `{"session_id":"a","cwd":"/w"}`, `{"session":"s","agent":"x","name":"n"}`, `[1]`, "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := machine.ParseHookPayload(b)
		if err != nil {
			return
		}
		again, err := json.Marshal(map[string]string{"session": p.Session, "cwd": p.Cwd, "agent": p.Agent,
			"hook_event_name": p.Event, "name": p.Name, "worktree_path": p.WorktreePath})
		if err != nil {
			t.Fatal(err)
		}
		q, err := machine.ParseHookPayload(again)
		if err != nil {
			t.Fatalf("the payload %+v does not parse again: %v", p, err)
		}
		if diff := cmp.Diff(p, q); diff != "" {
			t.Errorf("round trip (-first +again):\n%s", diff)
		}
	})
}
