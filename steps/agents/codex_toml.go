package agents

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// CodexFile is where the Codex app keeps a project's local environment,
// relative to the main checkout.
const CodexFile = ".codex/environments/environment.toml"

// The scripts custody writes into environment.toml. The Codex app runs
// them as bare commands (no stdin) in the worktree it made or removes. A
// script whose value is exactly one of these is custody's own and is kept
// in step; so is one exactly equal to a value an earlier custody wrote
// (CodexEarlierSetupScript), which is upgraded to the current one. Any other
// non-empty value is the person's and is never touched.
const (
	// CodexSetupScript is [setup].script: the tree put in custody (the
	// app's trees are plain git worktrees custody did not make) and its
	// resources made ready; both parts are idempotent.
	CodexSetupScript = "custody adopt --if-needed && custody resource ensure"
	// CodexCleanupScript is [cleanup].script: the tree's resources destroyed.
	CodexCleanupScript = "custody teardown"
)

// CodexEarlierSetupScript is the [setup].script an earlier custody wrote:
// still custody's own, so it is upgraded to CodexSetupScript, not kept.
const CodexEarlierSetupScript = "custody resource ensure"

// codexEarlier reports whether v is a script an earlier custody wrote into
// table.
func codexEarlier(table, v string) bool {
	return table == "setup" && v == CodexEarlierSetupScript
}

// ErrCodexEnvironment is wrapped by every error about an environment.toml
// custody cannot edit safely: it is not TOML, or it gives [setup] or
// [cleanup] a shape custody does not edit. Nothing is written then.
var ErrCodexEnvironment = errors.New("environment.toml cannot be edited")

// CodexKey is what custody found, and did, at one key of environment.toml.
type CodexKey struct {
	// Key is the dotted key: version, name, setup.script, cleanup.script.
	Key string `json:"key"`
	// Outcome is "added" (it was absent, or an empty script), "upgraded"
	// (an earlier custody's script replaced by the current one), "current"
	// (custody's value is there), or "kept" (the person's value, left
	// byte for byte).
	Outcome string `json:"outcome"`
	// Value is the value the file holds after the edit, when it is a
	// string or a number custody reads; empty otherwise.
	Value string `json:"value,omitempty"`
}

// CodexEdit is one byte-exact change: Old (raw bytes at Offset, empty for
// an insertion) becomes New. Every other byte of the file stays.
type CodexEdit struct {
	Offset int
	Old    string
	New    string
}

// CodexResult is the outcome of EditCodexEnvironment: the new bytes, the
// changes that make them from the old, and what happened at each key.
type CodexResult struct {
	Out   []byte
	Edits []CodexEdit
	Keys  []CodexKey
}

// codexTable is what the scan found of one of the [setup]/[cleanup] tables.
type codexTable struct {
	// defined: the table exists in any form (header, dotted keys, inline,
	// a sub-table); header: it has its own [name] header line, ending at
	// headerEnd (just past its newline, or at the end of the file).
	defined, header bool
	headerEnd       int
	// array: it is an array of tables ([[name]]) or not a table at all.
	array bool
	// script is the value node of its script key, when it has one.
	script       *unstable.Node
	scriptRaw    unstable.Range
	scriptString bool
	scriptValue  string
}

// codexScan is what one pass of the parser found.
type codexScan struct {
	rootKeys    map[string]bool
	rootValue   map[string]string
	tables      map[string]*codexTable
	firstHeader int // start of the line of the first table header; -1: none
	lastRootEnd int // just past the line of the last root key; -1: none
}

// EditCodexEnvironment returns src with custody's keys put in: version = 1
// and name = name only where absent (the Codex app requires both),
// [setup].script and [cleanup].script only where absent or an empty
// string. A script with any other value, every comment, the app's
// [[actions]] and every other byte are kept exactly. Applied to its own
// output it changes nothing. src empty (a missing file) gives a whole
// file. An error wraps ErrCodexEnvironment; then nothing may be written.
//
// The edit is checked before it is returned: the new file must decode to
// exactly the old file's values plus the keys added, or it is an error.
func EditCodexEnvironment(src []byte, name string) (CodexResult, error) {
	name = strings.ToValidUTF8(name, "\uFFFD") // TOML text is UTF-8
	var before map[string]any
	if err := toml.Unmarshal(src, &before); err != nil {
		return CodexResult{}, fmt.Errorf("%w: it is not valid TOML: %w", ErrCodexEnvironment, err)
	}
	if !utf8.Valid(src) {
		return CodexResult{}, fmt.Errorf("%w: it is not valid UTF-8", ErrCodexEnvironment)
	}
	sc, err := scanCodex(src)
	if err != nil {
		return CodexResult{}, err
	}
	eol := "\n"
	if bytes.Contains(src, []byte("\r\n")) {
		eol = "\r\n"
	}
	var res CodexResult
	insert := func(at int, lines ...string) {
		text := strings.Join(lines, eol) + eol
		if at > 0 && src[at-1] != '\n' {
			text = eol + text
		}
		res.Edits = append(res.Edits, CodexEdit{Offset: at, New: text})
	}

	// Root keys go after the last root key, else before the first table
	// (above the comment lines right over it), else at the end.
	var root []string
	want := map[string]any{}
	for _, k := range []struct{ key, line, value string }{
		{"version", "version = 1", "1"},
		{"name", "name = " + tomlString(name), name},
	} {
		if sc.rootKeys[k.key] {
			res.Keys = append(res.Keys, CodexKey{Key: k.key, Outcome: "kept", Value: sc.rootValue[k.key]})
			continue
		}
		root = append(root, k.line)
		if k.key == "version" {
			want[k.key] = int64(1)
		} else {
			want[k.key] = name
		}
		res.Keys = append(res.Keys, CodexKey{Key: k.key, Outcome: "added", Value: k.value})
	}
	// What goes at the end of the file is one insertion: root keys there
	// (a file with no table), then any table custody adds.
	var tail []string
	if len(root) > 0 {
		at := len(src)
		switch {
		case sc.lastRootEnd >= 0:
			at = sc.lastRootEnd
		case sc.firstHeader >= 0:
			at = aboveComments(src, sc.firstHeader)
		}
		if at == len(src) {
			tail = append(tail, root...)
		} else {
			insert(at, root...)
		}
	}

	var appended []string
	for _, t := range []struct{ table, script string }{{"setup", CodexSetupScript}, {"cleanup", CodexCleanupScript}} {
		key := t.table + ".script"
		tb := sc.tables[t.table]
		line := "script = " + tomlString(t.script)
		switch {
		case tb == nil || !tb.defined:
			appended = append(appended, "", "["+t.table+"]", line)
			want[t.table] = map[string]any{"script": t.script}
		case tb.array:
			return CodexResult{}, fmt.Errorf("%w: %s is not a table (custody edits only a [%s] table's script)", ErrCodexEnvironment, t.table, t.table)
		case tb.script != nil && tb.scriptString && tb.scriptValue == t.script:
			res.Keys = append(res.Keys, CodexKey{Key: key, Outcome: "current", Value: t.script})
			continue
		case tb.script != nil && tb.scriptString && strings.TrimSpace(tb.scriptValue) == "":
			// An empty script runs nothing: there is no command of the
			// person's to keep, so custody's takes its place.
			raw := string(src[tb.scriptRaw.Offset : tb.scriptRaw.Offset+tb.scriptRaw.Length])
			res.Edits = append(res.Edits, CodexEdit{Offset: int(tb.scriptRaw.Offset), Old: raw, New: tomlString(t.script)})
			want[t.table] = map[string]any{"script": t.script}
		case tb.script != nil && tb.scriptString && codexEarlier(t.table, tb.scriptValue):
			// An earlier custody's own script: custody's still, brought
			// up to date in place.
			raw := string(src[tb.scriptRaw.Offset : tb.scriptRaw.Offset+tb.scriptRaw.Length])
			res.Edits = append(res.Edits, CodexEdit{Offset: int(tb.scriptRaw.Offset), Old: raw, New: tomlString(t.script)})
			want[t.table] = map[string]any{"script": t.script}
			res.Keys = append(res.Keys, CodexKey{Key: key, Outcome: "upgraded", Value: t.script})
			continue
		case tb.script != nil:
			v := ""
			if tb.scriptString {
				v = tb.scriptValue
			}
			res.Keys = append(res.Keys, CodexKey{Key: key, Outcome: "kept", Value: v})
			continue
		case tb.header:
			insert(tb.headerEnd, line)
			want[t.table] = map[string]any{"script": t.script}
		default:
			return CodexResult{}, fmt.Errorf("%w: [%s] is written as dotted keys or an inline table without a script; custody adds its script only under a [%s] header (add script = %s there, or give the table its own header)",
				ErrCodexEnvironment, t.table, t.table, tomlString(t.script))
		}
		res.Keys = append(res.Keys, CodexKey{Key: key, Outcome: "added", Value: t.script})
	}
	tail = append(tail, appended...)
	if len(tail) > 0 && tail[0] == "" && len(bytes.TrimSpace(src)) == 0 {
		tail = tail[1:] // no blank line at the top of a new file
	}
	if len(tail) > 0 {
		insert(len(src), tail...)
	}
	res.Out = applyEdits(src, res.Edits)
	if err := checkCodexEdit(before, res.Out, want); err != nil {
		return CodexResult{}, err
	}
	return res, nil
}

// scanCodex walks the top-level expressions of src.
func scanCodex(src []byte) (codexScan, error) {
	sc := codexScan{rootKeys: map[string]bool{}, rootValue: map[string]string{}, tables: map[string]*codexTable{}, firstHeader: -1, lastRootEnd: -1}
	table := func(name string) *codexTable {
		if sc.tables[name] == nil {
			sc.tables[name] = &codexTable{}
		}
		return sc.tables[name]
	}
	p := unstable.Parser{KeepComments: true}
	p.Reset(src)
	var current []string
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			keys, last := keyParts(n.Key())
			if sc.firstHeader < 0 {
				sc.firstHeader = lineStart(src, int(last.Raw.Offset))
			}
			current = keys
			sc.rootKeys[keys[0]] = true
			if t := codexTableName(keys); t != "" {
				tb := table(t)
				tb.defined = true
				if n.Kind == unstable.ArrayTable && len(keys) == 1 {
					tb.array = true
				}
				if n.Kind == unstable.Table && len(keys) == 1 {
					tb.header = true
					tb.headerEnd = lineEnd(src, int(last.Raw.Offset+last.Raw.Length))
				}
			}
		case unstable.KeyValue:
			keys, _ := keyParts(n.Key())
			full := append(append([]string{}, current...), keys...)
			v := n.Value()
			if len(current) == 0 {
				sc.rootKeys[keys[0]] = true
				if len(keys) == 1 && (v.Kind == unstable.String || v.Kind == unstable.Integer) {
					sc.rootValue[keys[0]] = string(v.Data)
				}
				sc.lastRootEnd = lineEnd(src, int(n.Raw.Offset+n.Raw.Length))
			}
			t := codexTableName(full)
			if t == "" {
				continue
			}
			tb := table(t)
			tb.defined = true
			switch {
			case len(full) == 1 && v.Kind != unstable.InlineTable:
				tb.array = true // setup = "…": not a table
			case len(full) == 1:
				inlineScript(tb, v)
			case len(full) == 2 && full[1] == "script":
				setScript(tb, v)
			}
		}
	}
	if err := p.Error(); err != nil {
		return codexScan{}, fmt.Errorf("%w: it is not valid TOML: %w", ErrCodexEnvironment, err)
	}
	return sc, nil
}

// codexTableName is "setup" or "cleanup" when keys lie in that table.
func codexTableName(keys []string) string {
	if len(keys) > 0 && (keys[0] == "setup" || keys[0] == "cleanup") {
		return keys[0]
	}
	return ""
}

// inlineScript records the script key of an inline table value.
func inlineScript(tb *codexTable, v *unstable.Node) {
	it := v.Children()
	for it.Next() {
		kv := it.Node()
		if kv.Kind != unstable.KeyValue {
			continue
		}
		if keys, _ := keyParts(kv.Key()); len(keys) == 1 && keys[0] == "script" {
			setScript(tb, kv.Value())
		}
	}
}

// setScript records the value node of a script key.
func setScript(tb *codexTable, v *unstable.Node) {
	tb.script = v
	tb.scriptRaw = v.Raw
	tb.scriptString = v.Kind == unstable.String
	if tb.scriptString {
		tb.scriptValue = string(v.Data)
	}
}

// keyParts returns a key's decoded parts and its last part's node.
func keyParts(it unstable.Iterator) ([]string, *unstable.Node) {
	var parts []string
	var last *unstable.Node
	for it.Next() {
		last = it.Node()
		parts = append(parts, string(last.Data))
	}
	return parts, last
}

// lineStart is the offset of the start of the line holding offset at.
func lineStart(src []byte, at int) int {
	return bytes.LastIndexByte(src[:at], '\n') + 1
}

// lineEnd is the offset just past the newline ending the line that holds
// offset at, or the end of src.
func lineEnd(src []byte, at int) int {
	if i := bytes.IndexByte(src[at:], '\n'); i >= 0 {
		return at + i + 1
	}
	return len(src)
}

// aboveComments moves a line start up over the comment lines right above
// it, so what is inserted there does not come between a table and the
// comment that introduces it.
func aboveComments(src []byte, at int) int {
	for at > 0 {
		prev := lineStart(src, at-1)
		if !bytes.HasPrefix(bytes.TrimLeft(src[prev:at], " \t"), []byte("#")) {
			break
		}
		at = prev
	}
	return at
}

// applyEdits makes the edits (sorted by offset, none overlapping) to src.
func applyEdits(src []byte, edits []CodexEdit) []byte {
	sorted := append([]CodexEdit{}, edits...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && sorted[j].Offset < sorted[j-1].Offset; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	var out bytes.Buffer
	at := 0
	for _, e := range sorted {
		out.Write(src[at:e.Offset])
		out.WriteString(e.New)
		at = e.Offset + len(e.Old)
	}
	out.Write(src[at:])
	return out.Bytes()
}

// checkCodexEdit requires out to decode to before with exactly want's keys
// set (a table in want merged one level deep).
func checkCodexEdit(before map[string]any, out []byte, want map[string]any) error {
	var after map[string]any
	if err := toml.Unmarshal(out, &after); err != nil {
		return fmt.Errorf("%w: custody's edit would not be valid TOML (%w); nothing was written", ErrCodexEnvironment, err)
	}
	expect := map[string]any{}
	for k, v := range before {
		expect[k] = v
	}
	for k, v := range want {
		sub, ok := v.(map[string]any)
		if !ok {
			expect[k] = v
			continue
		}
		merged := map[string]any{}
		if old, ok := expect[k].(map[string]any); ok {
			for ok, ov := range old {
				merged[ok] = ov
			}
		}
		for sk, sv := range sub {
			merged[sk] = sv
		}
		expect[k] = merged
	}
	if !reflect.DeepEqual(after, expect) {
		return fmt.Errorf("%w: custody's edit would change more than its own keys; nothing was written", ErrCodexEnvironment)
	}
	return nil
}

// tomlString renders s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
