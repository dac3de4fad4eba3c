package agents

import (
	"bytes"
	"fmt"
	"strings"

	json "github.com/custody-sh/custody/machine/bytejson"
)

// ClaudeHook is one hook custody writes into .claude/settings.json: the
// event it runs on and the exact command line Claude Code runs (with sh).
type ClaudeHook struct {
	Event   string `json:"event"`
	Command string `json:"command"`
	// Timeout, when set, is the hook's time limit in seconds. Claude Code
	// gives a SessionEnd hook 1.5s unless one of its hooks names a longer
	// timeout (at most 60s), and any other hook 60s.
	Timeout int `json:"timeout,omitempty"`
	// Async runs the hook in the background: no prompt or tool call
	// waits for it.
	Async bool `json:"async,omitempty"`
}

// ClaudeHooks are custody's hooks for Claude Code. The session hooks'
// envelopes go to /dev/null: Claude Code adds what a SessionStart or
// UserPromptSubmit hook prints to the conversation, and the lease is
// custody's business, not the model's (a refusal still reaches stderr and
// the journal). Stop ends a turn, not a session, so it is a heartbeat: the
// lease is released only at SessionEnd. WorktreeCreate prints the new
// tree's path, which Claude Code reads.
func ClaudeHooks() []ClaudeHook {
	return []ClaudeHook{
		{Event: "WorktreeCreate", Command: "custody hook worktree-create --agent claude"},
		{Event: "WorktreeRemove", Command: "custody --remote-timeout 20s hook worktree-remove --agent claude >/dev/null", Timeout: claudeRemoveTimeout},
		{Event: "SessionStart", Command: "custody hook session-start --agent claude --ensure >/dev/null"},
		{Event: "UserPromptSubmit", Command: "custody hook heartbeat --agent claude >/dev/null", Async: true},
		{Event: "PostToolUse", Command: "custody hook heartbeat --agent claude >/dev/null", Async: true},
		{Event: "Stop", Command: "custody hook heartbeat --agent claude >/dev/null", Async: true},
		{Event: "SessionEnd", Command: "custody hook session-end --agent claude >/dev/null", Timeout: claudeSessionEndTimeout},
	}
}

// claudeSessionEndTimeout is the SessionEnd hook's time limit: session-end
// gives up on a busy state file after a second (it fits Claude Code's
// default 1.5s for SessionEnd hooks), and this leaves a slow machine room
// to start custody and write the release.
const claudeSessionEndTimeout = 5

// claudeRemoveTimeout is the WorktreeRemove hook's time limit: one plan
// and one apply of the tree, each remote bounded by --remote-timeout 20s,
// and the tree's files read once more before they go.
const claudeRemoveTimeout = 120

// ownedCommand reports whether a hook command is one custody writes: a
// custody hook command line. A group whose every command is one is
// custody's to replace; any other group is the user's and is kept as it is.
func ownedCommand(cmd string) bool {
	return strings.HasPrefix(cmd, "custody hook ") || strings.HasPrefix(cmd, "custody --remote-timeout ") && strings.Contains(cmd, " hook ")
}

// jsonObject is a JSON object whose members keep their order and their
// values' bytes.
type jsonObject struct {
	keys []string
	vals map[string]json.RawMessage
}

// parseObject reads one JSON object. A repeated member keeps its first
// place and its last value, as a JavaScript reader sees it.
func parseObject(b []byte) (*jsonObject, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	o := &jsonObject{vals: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.set(k, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return o, nil
}

func (o *jsonObject) set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// compact writes o as compact JSON, members in order.
func (o *jsonObject) compact(buf *bytes.Buffer) error {
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		if err := json.Compact(buf, o.vals[k]); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

// mergeClaudeSettings returns existing (empty: no file) with custody's
// hooks in it: under "hooks", each event's custody group replaced in place
// (or appended), custody groups of events it no longer uses dropped, and
// every other member and group kept as it is. The result is indented with
// two spaces and ends with a newline, so merging it again gives the same
// bytes. An error says what in existing cannot be merged.
func mergeClaudeSettings(existing []byte, hooks []ClaudeHook) ([]byte, error) {
	root := &jsonObject{vals: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(existing)) > 0 {
		var err error
		if root, err = parseObject(existing); err != nil {
			return nil, fmt.Errorf("it is not a JSON object: %v", err)
		}
	}
	events := &jsonObject{vals: map[string]json.RawMessage{}}
	if raw, ok := root.vals["hooks"]; ok {
		var err error
		if events, err = parseObject(raw); err != nil {
			return nil, fmt.Errorf(`its "hooks" is not a JSON object: %v`, err)
		}
	}
	want := map[string][]ClaudeHook{}
	var order []string
	for _, h := range hooks {
		if _, ok := want[h.Event]; !ok {
			order = append(order, h.Event)
		}
		want[h.Event] = append(want[h.Event], h)
	}
	for _, ev := range events.keys {
		if _, ok := want[ev]; !ok {
			order = append(order, ev) // an event custody no longer uses: drop its groups
		}
	}
	for _, ev := range order {
		var groups []json.RawMessage
		if raw, ok := events.vals[ev]; ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return nil, fmt.Errorf(`its hooks.%s is not an array of hook groups: %v`, ev, err)
			}
		}
		merged, err := mergeGroups(groups, want[ev])
		if err != nil {
			return nil, fmt.Errorf("its hooks.%s: %v", ev, err)
		}
		if merged == nil {
			if _, ok := events.vals[ev]; ok {
				events.vals[ev] = json.RawMessage("[]")
			}
			continue
		}
		b, err := marshalNoEscape(merged)
		if err != nil {
			return nil, err
		}
		events.set(ev, b)
	}
	var hb bytes.Buffer
	if err := events.compact(&hb); err != nil {
		return nil, err
	}
	root.set("hooks", hb.Bytes())
	var compact, out bytes.Buffer
	if err := root.compact(&compact); err != nil {
		return nil, err
	}
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// mergeGroups puts custody's group (its hooks; none: no group) where the
// first custody group of groups stands, or at the end, and drops every
// other custody group. A group that is not an object is refused.
func mergeGroups(groups []json.RawMessage, hooks []ClaudeHook) ([]json.RawMessage, error) {
	var mine json.RawMessage
	if len(hooks) > 0 {
		type hook struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Timeout int    `json:"timeout,omitempty"`
			Async   bool   `json:"async,omitempty"`
		}
		type group struct {
			Hooks []hook `json:"hooks"`
		}
		g := group{}
		for _, h := range hooks {
			g.Hooks = append(g.Hooks, hook{Type: "command", Command: h.Command, Timeout: h.Timeout, Async: h.Async})
		}
		var err error
		if mine, err = marshalNoEscape(g); err != nil {
			return nil, err
		}
	}
	out := []json.RawMessage{}
	placed := false
	for i, g := range groups {
		owned, err := ownedGroup(g)
		if err != nil {
			return nil, fmt.Errorf("group %d: %v", i, err)
		}
		switch {
		case !owned:
			out = append(out, g)
		case !placed && mine != nil:
			out = append(out, mine)
			placed = true
		}
	}
	if !placed && mine != nil {
		out = append(out, mine)
	}
	if len(out) == 0 && len(groups) == 0 {
		return nil, nil
	}
	return out, nil
}

// ownedGroup reports whether a hook group is custody's: every hook in it is
// a command custody writes.
func ownedGroup(raw json.RawMessage) (bool, error) {
	var g struct {
		Hooks []map[string]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return false, fmt.Errorf("not a hook group object: %v", err)
	}
	if len(g.Hooks) == 0 {
		return false, nil
	}
	for _, h := range g.Hooks {
		var cmd string
		if json.Unmarshal(h["command"], &cmd) != nil || !ownedCommand(cmd) {
			return false, nil
		}
	}
	return true, nil
}

// marshalNoEscape is json.Marshal keeping > and & as they are (shell).
func marshalNoEscape(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}
