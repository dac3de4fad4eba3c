package observe

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/custody-sh/custody/machine"
)

// ConfigUpgrade is custody.toml rewritten to machine.ConfigVersion.
type ConfigUpgrade struct {
	// New is the rewritten file: Old where nothing needed rewriting.
	New []byte
	// Changes say what was rewritten, one line each, in document order
	// ("line 3: [worktree.db] -> [resources.db]"); none when New is Old.
	Changes []string
	// InsertedAt and Inserted are the lines of New that were added (the
	// version and the blank line after it), 0-based, and how many: every
	// other line of New is the line of the old file at the same place,
	// rewritten or not. A rewrite never adds or removes any other line.
	InsertedAt, Inserted int
}

// configEdit replaces src[start:end] with text.
type configEdit struct {
	start, end int
	text       string
}

// UpgradeConfig rewrites the custody.toml in b (named name in errors) to
// the current format: each key of discern's configuration
// (machine.LegacyKeys) becomes what replaced it, and a file without a
// version gets `version = machine.ConfigVersion`. Only the bytes of those
// keys change: every comment, blank line, value and other key stays
// exactly as written, byte for byte.
//
// The rewrite is of keys as TOML writes them, read with their positions
// from the document: a header or a dotted key that holds the whole legacy
// path is rewritten whole, a key below it has only its renamed part
// rewritten. A legacy key written inside its parent table's body (`db.clone
// = …` under [worktree]) cannot be rewritten without moving it, and a key
// of a legacy table that custody has no counterpart for cannot be
// rewritten at all: both are refused naming the line, and nothing is
// rewritten. The result must be a valid custody.toml (ParseConfig), or it
// is refused with what is wrong with it.
func UpgradeConfig(name string, b []byte) (ConfigUpgrade, error) {
	bom := []byte("\uFEFF")
	src := bytes.TrimPrefix(b, bom)
	doc, err := parseTOML(src)
	if err != nil {
		return ConfigUpgrade{}, fmt.Errorf("%w: %s: %w", ErrConfig, name, err)
	}
	var edits []configEdit
	var changes []string
	insertedAt, inserted := 0, 0
	if v, ok := doc.value([]string{"version"}); ok {
		if n, isInt := v.(int64); isInt && n > machine.ConfigVersion {
			return ConfigUpgrade{}, &ConfigNewerError{Path: name, Version: n}
		}
	} else {
		at, text := doc.versionInsertion()
		edits = append(edits, configEdit{start: at, end: at, text: text})
		insertedAt, inserted = bytes.Count(src[:at], []byte("\n")), strings.Count(text, "\n")
		if text[0] == '\n' || text[0] == '\r' {
			// After a last line without a newline: that line gets one.
			insertedAt, inserted = insertedAt+1, inserted-1
		}
		changes = append(changes, fmt.Sprintf("line %d: version = %d added", doc.lineAt(at), machine.ConfigVersion))
	}
	for i := range doc.entries {
		e := &doc.entries[i]
		full := doc.keys.path(e.key)
		k, ok := machine.LegacyKeyOf(full)
		if !ok {
			continue
		}
		edit, err := legacyEdit(doc, e, full, k)
		if err != nil {
			return ConfigUpgrade{}, &configRefusal{&machine.Refusal{Code: machine.CodeConfigInvalid, Path: name, Retry: "custody config upgrade",
				Message: fmt.Sprintf("%s: line %d: %s; custody config upgrade rewrote nothing", machine.EscapeControl(name), e.line, err)}}
		}
		if edit.text != string(src[edit.start:edit.end]) {
			edits = append(edits, edit)
			changes = append(changes, fmt.Sprintf("line %d: %s -> %s", e.line, string(src[edit.start:edit.end]), edit.text))
		}
	}
	if len(edits) == 0 {
		// Current already, or invalid for reasons of its own.
		if _, err := ParseConfig(name, b, "project"); err != nil {
			return ConfigUpgrade{}, err
		}
		return ConfigUpgrade{New: b}, nil
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var out bytes.Buffer
	if len(src) < len(b) {
		out.Write(bom)
	}
	at := 0
	for _, e := range edits {
		out.Write(src[at:e.start])
		out.WriteString(e.text)
		at = e.end
	}
	out.Write(src[at:])
	if _, err := ParseConfig(name, out.Bytes(), "project"); err != nil {
		var newer *ConfigNewerError
		if errors.As(err, &newer) {
			return ConfigUpgrade{}, err
		}
		return ConfigUpgrade{}, fmt.Errorf("%w: %s: custody config upgrade rewrites only discern's keys and the version, and the file so rewritten would still not be valid (in the rewritten file, %s); fix it by hand", ErrConfig, name, strings.TrimPrefix(err.Error(), ErrConfig.Error()+": "+name+": "))
	}
	return ConfigUpgrade{New: out.Bytes(), Changes: changes, InsertedAt: insertedAt, Inserted: inserted}, nil
}

// legacyEdit is the rewrite of the entry e, whose full path full is or
// lies under the legacy key k, or why it cannot be rewritten.
func legacyEdit(doc *tomlDoc, e *tomlEntry, full []string, k machine.LegacyKey) (configEdit, error) {
	rest := append([]string(nil), full[len(k.Path):]...)
	if len(rest) > 0 && k.Renames != nil {
		to, ok := k.Renames[rest[0]]
		if !ok {
			return configEdit{}, fmt.Errorf("%s has no counterpart in custody's [%s] (it reads %s); remove or rename it by hand",
				keyString(full), keyString(k.To), machine.LegacyKeyMessage(k))
		}
		rest[0] = to
	}
	newFull := append(append([]string(nil), k.To...), rest...)
	base := len(full) - len(e.parts)
	switch {
	case base >= len(k.Path):
		// Below the legacy path (a key inside [worktree.db]): only the
		// part that is renamed, if it is written here.
		if i := len(k.Path) - base; i >= 0 && i < len(e.parts) && rest[0] != full[len(k.Path)] {
			p := e.parts[i]
			return configEdit{start: p[0], end: p[1], text: keyString(newFull[len(k.Path) : len(k.Path)+1])}, nil
		}
		return configEdit{start: e.start, end: e.start}, nil
	case len(newFull) >= base && equalParts(full[:base], newFull[:base]):
		// The key writes every part that changes ([worktree.db], or
		// port under [worktree]): it is written anew.
		return configEdit{start: e.parts[0][0], end: e.parts[len(e.parts)-1][1], text: keyString(newFull[base:])}, nil
	}
	return configEdit{}, fmt.Errorf("%s is written inside [%s], where its replacement %s cannot be: write it as its own [%s] table first (custody reads %s)",
		keyString(full[base:]), keyString(full[:base]), keyString(newFull), keyString(k.Path), machine.LegacyKeyMessage(k))
}

func equalParts(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

// versionInsertion is where `version = …` goes in a file without one, and
// the text that goes there: before the first key or header (top-level keys
// come before any table), above the comment lines directly over it, so a
// comment stays with what it describes. A file with no key gets it at its
// end.
func (d *tomlDoc) versionInsertion() (int, string) {
	eol := "\n"
	if bytes.Contains(d.src, []byte("\r\n")) {
		eol = "\r\n" // the file's own line ends
	}
	line := fmt.Sprintf("version = %d%s", machine.ConfigVersion, eol)
	if len(d.entries) == 0 {
		if len(d.src) > 0 && d.src[len(d.src)-1] != '\n' {
			return len(d.src), eol + line
		}
		return len(d.src), line
	}
	first := d.entries[0].start
	for _, e := range d.entries {
		first = min(first, e.start)
	}
	at := bytes.LastIndexByte(d.src[:first], '\n') + 1
	// Climb over the comment lines directly above.
	for at > 0 {
		prev := bytes.LastIndexByte(d.src[:at-1], '\n') + 1
		if t := bytes.TrimLeft(d.src[prev:at-1], " \t"); len(t) == 0 || t[0] != '#' {
			break
		}
		at = prev
	}
	if at < len(d.src) && d.src[at] != '\n' && !(d.src[at] == '\r' && at+1 < len(d.src) && d.src[at+1] == '\n') {
		line += eol
	}
	return at, line
}
