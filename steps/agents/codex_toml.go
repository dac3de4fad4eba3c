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

// CodexMode is what EditCodexEnvironment does to the file.
type CodexMode int

const (
	// CodexIntegrate writes custody's script where a table the app runs
	// has none (absent, or an empty string), upgrades an earlier custody's
	// script, and leaves a script of the person's as it is, reporting it
	// ("own") with the merged script it would write.
	CodexIntegrate CodexMode = iota
	// CodexMerge does what CodexIntegrate does, and also puts custody's
	// line into every script of the person's ("merged").
	CodexMerge
	// CodexRemove takes custody's line out of every table it co-manages
	// again ("removed"), giving back the bytes custody's edits changed.
	CodexRemove
)

// String names the mode as the CLI does.
func (m CodexMode) String() string {
	switch m {
	case CodexMerge:
		return "merge"
	case CodexRemove:
		return "remove"
	}
	return "integrate"
}

// CodexKey is what custody found, and did, at one key of environment.toml.
type CodexKey struct {
	// Key is the dotted key: version, name, setup.script,
	// setup.linux.script, ….
	Key string `json:"key"`
	// Table is the table a script key belongs to (setup, setup.linux,
	// cleanup.darwin, …); empty for version and name.
	Table string `json:"table,omitempty"`
	// Outcome is one of:
	//   - "added": the key was absent, or an empty script; custody's is
	//     there now.
	//   - "upgraded": an earlier custody's script replaced by the current
	//     one.
	//   - "current": the script runs custody's line already.
	//   - "merged": custody's line put into the person's script, every
	//     byte of theirs kept (CodexMerge).
	//   - "own": the person's script, left as it is, which does not run
	//     custody's line: the app runs it without custody (Merged is what
	//     CodexMerge would make of it).
	//   - "removed": custody's line taken out (CodexRemove); "absent":
	//     there was none to take out.
	//   - "unmanaged": a win32 override, which custody never edits.
	//   - "kept": version or name, the person's value.
	Outcome string `json:"outcome"`
	// Value is the value the file holds after the edit, when it is a
	// string or a number custody reads; empty otherwise.
	Value string `json:"value,omitempty"`
	// Merged is, for "own", the script with custody's line put in.
	Merged string `json:"merged,omitempty"`
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

// Lacking names the tables whose script the app runs without custody's
// line after the edit (outcome "own"), in file order of kind and platform.
func (r CodexResult) Lacking() []string {
	var out []string
	for _, k := range r.Keys {
		if k.Outcome == "own" {
			out = append(out, k.Table)
		}
	}
	return out
}

// codexLine is custody's line for a kind of table.
func codexLine(kind string) string {
	if kind == "setup" {
		return CodexSetupScript
	}
	return CodexCleanupScript
}

// codexAddedMark ends the header line of a table integrate adds whole:
// --remove takes such a table out whole, blank line above included, and
// gives back the bytes the file had. Without it (the app rewrote the file
// and dropped the comment, or the person wrote the table) custody cannot
// tell the table from one the person made, so only its line is cut out and
// an empty script stays: the app's own spelling of "nothing to run".
const codexAddedMark = " # added by custody integrate codex"

// codexManaged lists, per kind, the tables custody co-manages: the base
// script the app runs on every platform without an override, and the
// overrides for the platforms custody runs on. [setup.win32] and
// [cleanup.win32] are reported, never edited: custody does not run on
// Windows, and a win32 script is the person's PowerShell.
var codexManaged = [...]string{"", "darwin", "linux"}

// EditCodexEnvironment returns src edited as mode says; name is the name
// written when the file has none. It co-manages every table the Codex app
// runs a script from: [setup] and [cleanup], and each darwin or linux
// override of them that exists. Integrating adds version = 1 and name
// (the app requires both) only where absent, and gives a table without a
// script custody's (a [setup] or [cleanup] table is added, or the key put
// under its header). custody's line goes into a script as codexInsertAt
// says, by inserting bytes only; every comment, the app's [[actions]], the
// person's lines and every other byte are kept exactly. Applied to its own
// output it changes nothing; CodexRemove applied to CodexMerge's output
// gives back the input's bytes. src empty (a missing file) gives a whole
// file. An error wraps ErrCodexEnvironment; then nothing may be written.
//
// The edit is checked before it is returned: the new file must decode to
// exactly the old file's values with custody's scripts put in or taken
// out, or it is an error.
func EditCodexEnvironment(src []byte, name string, mode CodexMode) (CodexResult, error) {
	name = strings.ToValidUTF8(name, "\uFFFD") // TOML text is UTF-8
	var before map[string]any
	if err := toml.Unmarshal(src, &before); err != nil {
		if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
			return CodexResult{}, fmt.Errorf("%w: it begins with a byte order mark, which TOML does not allow (save it as UTF-8 without one)", ErrCodexEnvironment)
		}
		return CodexResult{}, fmt.Errorf("%w: it is not valid TOML: %w", ErrCodexEnvironment, err)
	}
	if !utf8.Valid(src) {
		return CodexResult{}, fmt.Errorf("%w: it is not valid UTF-8", ErrCodexEnvironment)
	}
	if err := codexShape(before); err != nil {
		return CodexResult{}, err
	}
	sc, err := scanCodex(src)
	if err != nil {
		return CodexResult{}, err
	}
	e := &codexEditor{src: src, sc: sc, mode: mode, eol: "\n", want: codexCopy(before)}
	if bytes.Contains(src, []byte("\r\n")) {
		e.eol = "\r\n"
	}
	if mode != CodexRemove {
		e.rootKeys(name)
	}
	for _, kind := range []string{"setup", "cleanup"} {
		for _, p := range codexManaged {
			table := kind
			if p != "" {
				table += "." + p
			}
			if err := e.table(kind, table); err != nil {
				return CodexResult{}, err
			}
		}
		if s := sc.scripts[kind+".win32"]; s != nil {
			e.res.Keys = append(e.res.Keys, CodexKey{Key: kind + ".win32.script", Table: kind + ".win32", Outcome: "unmanaged", Value: s.value})
		}
	}
	e.finishTail()
	e.res.Out = applyEdits(src, e.res.Edits)
	if err := checkCodexEdit(e.res.Out, e.want); err != nil {
		return CodexResult{}, err
	}
	return e.res, nil
}

// codexEditor gathers one edit of environment.toml: the byte edits, what
// happened at each key, and what the file must decode to afterwards.
type codexEditor struct {
	src  []byte
	sc   codexScan
	mode CodexMode
	eol  string
	res  CodexResult
	want map[string]any
	// tail is what goes at the end of the file, as one insertion.
	tail []string
}

// insert adds lines (each ended by the file's line end) at offset at,
// starting a new line first when at is not at a line start.
func (e *codexEditor) insert(at int, lines ...string) {
	text := strings.Join(lines, e.eol) + e.eol
	if at > 0 && e.src[at-1] != '\n' {
		text = e.eol + text
	}
	e.res.Edits = append(e.res.Edits, CodexEdit{Offset: at, New: text})
}

// rootKeys adds version and name where absent: after the last root key,
// else before the first table (above the comment lines right over it),
// else at the end.
func (e *codexEditor) rootKeys(name string) {
	var root []string
	for _, k := range []struct{ key, line, value string }{
		{"version", "version = 1", "1"},
		{"name", "name = " + tomlString(name), name},
	} {
		if e.sc.rootKeys[k.key] {
			e.res.Keys = append(e.res.Keys, CodexKey{Key: k.key, Outcome: "kept", Value: e.sc.rootValue[k.key]})
			continue
		}
		root = append(root, k.line)
		if k.key == "version" {
			e.want[k.key] = int64(1)
		} else {
			e.want[k.key] = name
		}
		e.res.Keys = append(e.res.Keys, CodexKey{Key: k.key, Outcome: "added", Value: k.value})
	}
	if len(root) == 0 {
		return
	}
	at := len(e.src)
	switch {
	case e.sc.lastRootEnd >= 0:
		at = e.sc.lastRootEnd
	case e.sc.firstHeader >= 0:
		at = aboveComments(e.src, e.sc.firstHeader)
	}
	if at == len(e.src) {
		e.tail = append(e.tail, root...)
	} else {
		e.insert(at, root...)
	}
}

// finishTail makes the insertion at the end of the file.
func (e *codexEditor) finishTail() {
	tail := e.tail
	if len(tail) > 0 && tail[0] == "" && len(bytes.TrimSpace(e.src)) == 0 {
		tail = tail[1:] // no blank line at the top of a new file
	}
	if len(tail) > 0 {
		e.insert(len(e.src), tail...)
	}
}

// table edits one co-managed table's script.
func (e *codexEditor) table(kind, table string) error {
	s := e.sc.scripts[table]
	base := table == kind
	key := table + ".script"
	path := append(strings.Split(table, "."), "script")
	line := codexLine(kind)
	if e.mode == CodexRemove {
		if s != nil {
			e.remove(kind, table, s)
		}
		return nil
	}
	switch {
	case s == nil && !base:
		return nil // no override: the base script runs there
	case s == nil:
		return e.addBase(kind)
	case codexRunsLine(s.value, line):
		e.res.Keys = append(e.res.Keys, CodexKey{Key: key, Table: table, Outcome: "current", Value: s.value})
	case codexEarlier(kind, s.value):
		// An earlier custody's own script: custody's still, brought up to
		// date in place.
		raw := e.raw(s.raw)
		e.res.Edits = append(e.res.Edits, CodexEdit{Offset: int(s.raw.Offset), Old: raw, New: tomlString(line)})
		codexSet(e.want, path, line)
		e.res.Keys = append(e.res.Keys, CodexKey{Key: key, Table: table, Outcome: "upgraded", Value: line})
	case strings.TrimSpace(s.value) == "":
		// An empty script runs nothing: there is no command of the
		// person's to keep, so custody's takes its place.
		merged := e.merge(path, s, line)
		e.res.Keys = append(e.res.Keys, CodexKey{Key: key, Table: table, Outcome: "added", Value: merged})
	case e.mode == CodexMerge:
		merged := e.merge(path, s, line)
		e.res.Keys = append(e.res.Keys, CodexKey{Key: key, Table: table, Outcome: "merged", Value: merged})
	default:
		f, _ := codexForm(e.raw(s.raw))
		e.res.Keys = append(e.res.Keys, CodexKey{Key: key, Table: table, Outcome: "own", Value: s.value, Merged: codexMerged(s.value, line, f.multiLine)})
	}
	return nil
}

// raw is the source text of r.
func (e *codexEditor) raw(r unstable.Range) string {
	return string(e.src[r.Offset : r.Offset+r.Length])
}

// merge inserts custody's line into the string s and returns the script it
// makes.
func (e *codexEditor) merge(path []string, s *codexScript, line string) string {
	raw := e.raw(s.raw)
	f, _ := codexForm(raw)
	start, end := codexContent(raw, f)
	eol := e.eol
	switch content := raw[start:end]; {
	case strings.Contains(content, "\r\n"):
		eol = "\r\n"
	case strings.Contains(content, "\n"):
		eol = "\n"
	}
	at, text := codexInsertAt(raw, f, line, eol)
	e.res.Edits = append(e.res.Edits, CodexEdit{Offset: int(s.raw.Offset) + at, New: text})
	merged := codexMerged(s.value, line, f.multiLine)
	codexSet(e.want, path, merged)
	return merged
}

// addBase gives a [setup] or [cleanup] table without a script custody's:
// under its own header, or as a new table at the end of the file when it
// has no header (it is absent, or only its overrides' headers imply it).
func (e *codexEditor) addBase(kind string) error {
	line := codexLine(kind)
	kv := "script = " + tomlString(line)
	b := e.sc.base[kind]
	switch {
	case b.header:
		e.insert(b.headerEnd, kv)
	case b.direct:
		return fmt.Errorf("%w: [%s] is written as dotted keys or an inline table without a script; custody adds its script only under a [%s] header (add script = %s there, or give the table its own header)",
			ErrCodexEnvironment, kind, kind, tomlString(line))
	default:
		e.tail = append(e.tail, "", "["+kind+"]"+codexAddedMark, kv)
	}
	codexSet(e.want, []string{kind, "script"}, line)
	e.res.Keys = append(e.res.Keys, CodexKey{Key: kind + ".script", Table: kind, Outcome: "added", Value: line})
	return nil
}

// remove takes custody's line out of one table's script. A table that
// holds nothing but custody's script under its own header is deleted
// whole with the blank line above it: a [setup] or [cleanup] table
// integrate added (its header carries codexAddedMark), or a darwin or
// linux override (custody never adds one: cut, it would be blank, which
// custody refuses to read). Any other custody line is cut out of its
// string as codexCut says. An override whose script is custody's line
// alone, in another shape, keeps it ("kept").
func (e *codexEditor) remove(kind, table string, s *codexScript) {
	key := table + ".script"
	path := append(strings.Split(table, "."), "script")
	line := codexLine(kind)
	if !codexRunsLine(s.value, line) && codexEarlier(kind, s.value) {
		line = s.value
	}
	if !codexRunsLine(s.value, line) {
		e.res.Keys = append(e.res.Keys, CodexKey{Key: key, Table: table, Outcome: "absent", Value: s.value})
		return
	}
	rest, _ := codexUnmerged(s.value, line)
	if strings.TrimSpace(rest) == "" {
		mark := ""
		if table == kind {
			mark = codexAddedMark
		}
		from, to, ok := e.wholeTable(table, mark, s)
		if !ok && table != kind {
			e.res.Keys = append(e.res.Keys, CodexKey{Key: key, Table: table, Outcome: "kept", Value: s.value})
			return
		}
		if ok {
			e.res.Edits = append(e.res.Edits, CodexEdit{Offset: from, Old: string(e.src[from:to])})
			codexDelete(e.want, path)
			if t, _ := codexGet(e.want, path[:len(path)-1]).(map[string]any); t != nil && len(t) == 0 {
				codexDelete(e.want, path[:len(path)-1])
			}
			e.res.Keys = append(e.res.Keys, CodexKey{Key: key, Table: table, Outcome: "removed"})
			return
		}
	}
	raw := e.raw(s.raw)
	f, _ := codexForm(raw)
	start, end := codexContent(raw, f)
	from, to, ok := codexCut(raw[start:end], line)
	if !ok {
		// The line is there once decoded, but not as raw bytes custody
		// can cut (escapes): left as it is.
		e.res.Keys = append(e.res.Keys, CodexKey{Key: key, Table: table, Outcome: "kept", Value: s.value})
		return
	}
	off := int(s.raw.Offset) + start
	e.res.Edits = append(e.res.Edits, CodexEdit{Offset: off + from, Old: raw[start+from : start+to]})
	codexSet(e.want, path, rest)
	e.res.Keys = append(e.res.Keys, CodexKey{Key: key, Table: table, Outcome: "removed", Value: rest})
}

// wholeTable finds a table that is its header line, exactly [table] and
// mark, and its script line, exactly script = "<custody's value>", and
// nothing else: the bytes to delete (with the blank line above it, when
// there is one).
func (e *codexEditor) wholeTable(table, mark string, s *codexScript) (from, to int, ok bool) {
	b := e.sc.base[table]
	if b == nil || !b.header || !s.top || int(s.kv.Offset) != b.headerEnd {
		return 0, 0, false
	}
	eol := "\n"
	if bytes.HasSuffix(e.src[:b.headerEnd], []byte("\r\n")) {
		eol = "\r\n"
	}
	kv := "script = " + tomlString(s.value)
	to = b.headerEnd + len(kv)
	switch {
	case to > len(e.src) || string(e.src[b.headerEnd:to]) != kv:
		return 0, 0, false
	case strings.HasPrefix(string(e.src[to:]), eol):
		to += len(eol)
	case to != len(e.src):
		return 0, 0, false
	}
	if string(e.src[b.headerLine:b.headerEnd]) != "["+table+"]"+mark+eol {
		return 0, 0, false
	}
	if next, more := e.sc.nextExpr(int(s.kv.Offset)); more && next == unstable.KeyValue {
		return 0, 0, false
	}
	from = b.headerLine
	if blank := from - len(eol); blank >= 0 && string(e.src[blank:from]) == eol && (blank == 0 || e.src[blank-1] == '\n') {
		from = blank
	}
	return from, to, true
}

// codexGet is the value at path in doc, or nil.
func codexGet(doc map[string]any, path []string) any {
	var v any = doc
	for _, k := range path {
		t, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = t[k]
	}
	return v
}

// codexCopy copies a decoded document, tables deeply.
func codexCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if t, ok := v.(map[string]any); ok {
			v = codexCopy(t)
		}
		out[k] = v
	}
	return out
}

// codexSet sets the string at path in doc, making tables on the way.
func codexSet(doc map[string]any, path []string, v string) {
	for _, k := range path[:len(path)-1] {
		t, ok := doc[k].(map[string]any)
		if !ok {
			t = map[string]any{}
			doc[k] = t
		}
		doc = t
	}
	doc[path[len(path)-1]] = v
}

// codexDelete deletes the key at path in doc.
func codexDelete(doc map[string]any, path []string) {
	for _, k := range path[:len(path)-1] {
		t, ok := doc[k].(map[string]any)
		if !ok {
			return
		}
		doc = t
	}
	delete(doc, path[len(path)-1])
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

// checkCodexEdit requires out to decode to exactly want: the old file's
// values with custody's scripts put in or taken out. A multi-line string's
// line ends decode as written, so strings compare with CRLF read as LF.
func checkCodexEdit(out []byte, want map[string]any) error {
	var after map[string]any
	if err := toml.Unmarshal(out, &after); err != nil {
		return fmt.Errorf("%w: custody's edit would not be valid TOML (%w); nothing was written", ErrCodexEnvironment, err)
	}
	if !reflect.DeepEqual(codexLF(after), codexLF(want)) {
		return fmt.Errorf("%w: custody's edit would change more than its own lines; nothing was written", ErrCodexEnvironment)
	}
	return nil
}

// codexLF is v with every CRLF in its strings read as LF.
func codexLF(v any) any {
	switch v := v.(type) {
	case string:
		return strings.ReplaceAll(v, "\r\n", "\n")
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = codexLF(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = codexLF(e)
		}
		return out
	}
	return v
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
