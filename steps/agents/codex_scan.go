package agents

import (
	"fmt"

	"github.com/pelletier/go-toml/v2/unstable"
)

// codexScript is a script key's value as the file writes it.
type codexScript struct {
	// raw is the value's bytes, delimiters included; kv the whole
	// key = value expression's (top-level expressions only: top).
	raw, kv unstable.Range
	top     bool
	// str: the value is a string, whose decoded text is value.
	str   bool
	value string
}

// codexBase is what the scan found of a [setup] or [cleanup] table itself.
type codexBase struct {
	// header: it has its own [name] header line, from headerLine to
	// headerEnd (just past its line end, or the end of the file).
	header                bool
	headerLine, headerEnd int
	// direct: keys of its own are written outside such a header (dotted
	// keys at the top level, or an inline table), so no header can be
	// added for it.
	direct bool
}

// codexExpr is one top-level expression: its kind and where it starts.
type codexExpr struct {
	kind   unstable.Kind
	offset int
}

// codexScan is what one pass of the parser found.
type codexScan struct {
	rootKeys    map[string]bool
	rootValue   map[string]string
	firstHeader int // start of the line of the first table header; -1: none
	lastRootEnd int // just past the line of the last root key; -1: none
	// scripts are keyed by table: "setup", "setup.linux", ….
	scripts map[string]*codexScript
	// base is keyed by table too: [setup] and [cleanup] always, an
	// override when it has its own header.
	base  map[string]*codexBase
	exprs []codexExpr
}

// scanCodex walks the expressions of src, inline tables included.
func scanCodex(src []byte) (codexScan, error) {
	sc := codexScan{rootKeys: map[string]bool{}, rootValue: map[string]string{}, scripts: map[string]*codexScript{},
		base: map[string]*codexBase{"setup": {}, "cleanup": {}}, firstHeader: -1, lastRootEnd: -1}
	p := unstable.Parser{KeepComments: true}
	p.Reset(src)
	var current []string
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			keys, last := keyParts(n.Key())
			sc.exprs = append(sc.exprs, codexExpr{kind: n.Kind, offset: int(last.Raw.Offset)})
			if sc.firstHeader < 0 {
				sc.firstHeader = lineStart(src, int(last.Raw.Offset))
			}
			current = keys
			sc.rootKeys[keys[0]] = true
			if table := codexHeaderTable(keys); table != "" && n.Kind == unstable.Table {
				b := sc.base[table]
				if b == nil {
					b = &codexBase{}
					sc.base[table] = b
				}
				b.header = true
				b.headerLine = lineStart(src, int(last.Raw.Offset))
				b.headerEnd = lineEnd(src, int(last.Raw.Offset+last.Raw.Length))
			}
		case unstable.KeyValue:
			sc.exprs = append(sc.exprs, codexExpr{kind: n.Kind, offset: int(n.Raw.Offset)})
			keys, _ := keyParts(n.Key())
			v := n.Value()
			if len(current) == 0 {
				sc.rootKeys[keys[0]] = true
				if len(keys) == 1 && (v.Kind == unstable.String || v.Kind == unstable.Integer) {
					sc.rootValue[keys[0]] = string(v.Data)
				}
				sc.lastRootEnd = lineEnd(src, int(n.Raw.Offset+n.Raw.Length))
				if b := sc.base[keys[0]]; b != nil {
					b.direct = true
				}
			}
			sc.keyValue(current, n, true)
		}
	}
	if err := p.Error(); err != nil {
		return codexScan{}, fmt.Errorf("%w: it is not valid TOML: %w", ErrCodexEnvironment, err)
	}
	return sc, nil
}

// keyValue records the script keys a key = value expression writes under
// prefix, descending into inline tables.
func (sc *codexScan) keyValue(prefix []string, n *unstable.Node, top bool) {
	keys, _ := keyParts(n.Key())
	full := append(append([]string{}, prefix...), keys...)
	v := n.Value()
	if table := codexScriptTable(full); table != "" {
		s := &codexScript{raw: v.Raw, kv: n.Raw, top: top, str: v.Kind == unstable.String}
		if s.str {
			s.value = string(v.Data)
		}
		sc.scripts[table] = s
	}
	if v.Kind != unstable.InlineTable {
		return
	}
	it := v.Children()
	for it.Next() {
		if c := it.Node(); c.Kind == unstable.KeyValue {
			sc.keyValue(full, c, false)
		}
	}
}

// codexScriptTable is the table ("setup", "cleanup.linux", …) whose script
// the key path names, or "".
func codexScriptTable(path []string) string {
	if len(path) < 2 || path[len(path)-1] != "script" || !codexKind(path[0]) {
		return ""
	}
	switch {
	case len(path) == 2:
		return path[0]
	case len(path) == 3 && codexPlatform(path[1]):
		return path[0] + "." + path[1]
	}
	return ""
}

// codexHeaderTable is the table a header names when it is one the app
// runs a script from ([setup], [cleanup.linux], …), or "".
func codexHeaderTable(keys []string) string {
	switch {
	case len(keys) == 1 && codexKind(keys[0]):
		return keys[0]
	case len(keys) == 2 && codexKind(keys[0]) && codexPlatform(keys[1]):
		return keys[0] + "." + keys[1]
	}
	return ""
}

// codexKind reports whether k names a table of scripts the app runs.
func codexKind(k string) bool { return k == "setup" || k == "cleanup" }

// codexPlatform reports whether p is a platform the app overrides a script
// for (Node.js platform names).
func codexPlatform(p string) bool { return p == "darwin" || p == "linux" || p == "win32" }

// nextExpr is the kind of the top-level expression after the one starting
// at offset; ok is false when there is none.
func (sc *codexScan) nextExpr(offset int) (unstable.Kind, bool) {
	for i, e := range sc.exprs {
		if e.offset == offset && i+1 < len(sc.exprs) {
			return sc.exprs[i+1].kind, true
		}
	}
	return 0, false
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
