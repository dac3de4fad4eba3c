package machine

import (
	"bytes"
	"fmt"

	json "github.com/custody-sh/custody/machine/bytejson"
)

// MaxHookPayload bounds what a hook reads of its stdin. Claude Code's
// payloads carry a prompt or a tool's output; what is larger than this is
// reported, not read.
const MaxHookPayload = 1 << 20

// HookPayload is what a hook reads of the JSON an agent hands it on stdin.
// Claude Code's field names (session_id, cwd, hook_event_name, name,
// worktree_path) and a generic shape (session, cwd, agent) are both read;
// every other member is ignored.
type HookPayload struct {
	// Session is session_id, or session.
	Session string `json:"session,omitempty"`
	// Cwd is the directory the agent works in.
	Cwd string `json:"cwd,omitempty"`
	// Agent names the agent (generic shape); empty for Claude Code.
	Agent string `json:"agent,omitempty"`
	// Event is Claude Code's hook_event_name.
	Event string `json:"event,omitempty"`
	// Name is the name of a worktree to create (WorktreeCreate's name,
	// or worktree_name).
	Name string `json:"name,omitempty"`
	// WorktreePath is the worktree to retire (WorktreeRemove).
	WorktreePath string `json:"worktree_path,omitempty"`
}

// hookWire is every member a payload may spell a field with.
type hookWire struct {
	SessionID     *string `json:"session_id"`
	Session       *string `json:"session"`
	Cwd           *string `json:"cwd"`
	Agent         *string `json:"agent"`
	HookEventName *string `json:"hook_event_name"`
	Name          *string `json:"name"`
	WorktreeName  *string `json:"worktree_name"`
	WorktreePath  *string `json:"worktree_path"`
}

// ParseHookPayload reads one hook payload. Empty input (only white space)
// is the zero payload: a hook run by hand, its fields given as flags. Input
// that is not one JSON object, or a field that is not a string, is an
// error naming what was wrong. It is pure.
func ParseHookPayload(b []byte) (HookPayload, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return HookPayload{}, nil
	}
	if len(b) > MaxHookPayload {
		return HookPayload{}, fmt.Errorf("the payload is larger than %d bytes", MaxHookPayload)
	}
	if b[0] != '{' {
		return HookPayload{}, fmt.Errorf("the payload is not a JSON object")
	}
	var w hookWire
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&w); err != nil {
		return HookPayload{}, fmt.Errorf("the payload is not a JSON object of strings: %v", err)
	}
	if trailing(dec) {
		return HookPayload{}, fmt.Errorf("the payload holds more than one JSON value")
	}
	first := func(vs ...*string) string {
		for _, v := range vs {
			if v != nil && *v != "" {
				return *v
			}
		}
		return ""
	}
	return HookPayload{
		Session:      first(w.SessionID, w.Session),
		Cwd:          first(w.Cwd),
		Agent:        first(w.Agent),
		Event:        first(w.HookEventName),
		Name:         first(w.Name, w.WorktreeName),
		WorktreePath: first(w.WorktreePath),
	}, nil
}
