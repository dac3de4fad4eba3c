package observe

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/custody-sh/custody/machine"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlDoc is custody.toml parsed once with its positions: the decoded
// values, and every key as the document writes it, in document order.
// Every message about the file takes its line and its key from here.
type tomlDoc struct {
	src []byte
	// values is the document decoded into generic maps: strings, int64,
	// float64, bool, dates and times, []any and map[string]any.
	values map[string]any
	// entries are the keys the document writes, in document order: each
	// [table] and [[array table]] header, each key = value, and each key
	// inside an inline table (also one inside an array), by full path.
	entries []tomlEntry
	// keys holds every path the entries name.
	keys keyTrie
	// newlines are the offsets of the document's '\n' bytes.
	newlines []int
	// written counts the key parts the document writes, and its inline
	// tables, against MaxConfigKeys.
	written int
}

// MaxConfigKeys bounds custody.toml's keys, counting each part of a dotted
// key or a header and each inline table: the TOML decoder's check for keys
// defined twice costs the square of their number, so a file of 1 MiB of
// keys would take minutes. A real file has a few dozen.
const MaxConfigKeys = 4096

// tomlEntry is one key as the document writes it.
type tomlEntry struct {
	// key is the entry's path in tomlDoc.keys.
	key int
	// line is the line of the key's first part.
	line int
	// start and end are the byte span from the key's first part to the end
	// of its value (of the key, for a header).
	start, end int
	// arrayTable is true for a [[path]] header.
	arrayTable bool
	// parts are the byte spans of the key's parts as written, the last
	// len(parts) parts of its path (the rest is its table's).
	parts [][2]int
}

// keyTrie numbers the paths of a document, each once, so that a deeply
// nested or long dotted key costs its length, not its length squared.
type keyTrie struct {
	// nodes[0] is the document itself, the empty path.
	nodes []keyNode
	ids   map[keyStep]int
}

type keyNode struct {
	parent int
	part   string
	depth  int
	// head is the path's first keyHead parts (all of them when shorter):
	// custody.toml's shape is no deeper, so what lies below is decided there.
	head []string
	// line is the line of the first entry that names the path (the path
	// itself or a longer one); 0 before one does.
	line int
}

type keyStep struct {
	parent int
	part   string
}

// keyHead is one more than the depth of custody.toml's deepest key
// (resources.<name>.create), so a head also shows what is beneath a leaf.
const keyHead = 4

// child is the id of path(parent) + part, numbered on first sight.
func (t *keyTrie) child(parent int, part string) int {
	if id, ok := t.ids[keyStep{parent, part}]; ok {
		return id
	}
	p := t.nodes[parent]
	head := p.head
	if p.depth < keyHead {
		head = append(p.head[:p.depth:p.depth], part)
	}
	t.nodes = append(t.nodes, keyNode{parent: parent, part: part, depth: p.depth + 1, head: head})
	id := len(t.nodes) - 1
	t.ids[keyStep{parent, part}] = id
	return id
}

// find is the id of path, or -1 when no entry names it.
func (t *keyTrie) find(path []string) int {
	id := 0
	for _, k := range path {
		next, ok := t.ids[keyStep{id, k}]
		if !ok {
			return -1
		}
		id = next
	}
	return id
}

// path is the full path of id.
func (t *keyTrie) path(id int) []string {
	if id <= 0 {
		return nil
	}
	out := make([]string, t.nodes[id].depth)
	for ; id > 0; id = t.nodes[id].parent {
		out[t.nodes[id].depth-1] = t.nodes[id].part
	}
	return out
}

// parseTOML parses b. A syntax error, a key defined twice or a value TOML
// does not allow (an integer beyond 64 bits, a 13th month) is an error
// of one line naming the line and, when one is being defined, the key:
// `line 4 (last key "resources.db.retries"): <what is wrong>`.
func parseTOML(b []byte) (d *tomlDoc, err error) {
	defer func() {
		// The document is untrusted; a parser that panics on it must not
		// end the process.
		if p := recover(); p != nil {
			d, err = nil, errors.New("the TOML parser failed on this file")
		}
	}()
	d = &tomlDoc{src: b, keys: keyTrie{nodes: []keyNode{{}}, ids: map[keyStep]int{}}}
	for i, c := range b {
		if c == '\n' {
			d.newlines = append(d.newlines, i)
		}
	}
	var p unstable.Parser
	p.Reset(b)
	table := 0  // the key of the last header; 0 is the document
	resume := 0 // where the next expression may begin
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			key, start, end, parts := d.keyOf(0, e.Key())
			table = key
			d.add(tomlEntry{key: key, start: start, end: end, arrayTable: e.Kind == unstable.ArrayTable, parts: parts})
			resume = end
		case unstable.KeyValue:
			d.addKeyValue(table, e)
			resume = int(e.Raw.Offset + e.Raw.Length)
		default:
		}
		if d.written > MaxConfigKeys {
			return nil, fmt.Errorf("line %d: more keys than the %d custody reads", d.lineAt(resume), MaxConfigKeys)
		}
	}
	if perr := (*unstable.ParserError)(nil); errors.As(p.Error(), &perr) {
		at := cap(b) - cap(perr.Highlight) // the highlight is a part of b
		if at < 0 || at > len(b) {
			at = len(b)
		}
		return nil, d.errorAt(at, failingKey(b, resume, at, d.keys.path(table)), perr.Message)
	} else if p.Error() != nil {
		return nil, p.Error()
	}
	if err := toml.Unmarshal(b, &d.values); err != nil {
		var de *toml.DecodeError
		if !errors.As(err, &de) {
			return nil, err
		}
		row, col := de.Position()
		at := d.offset(row, col)
		var key []string
		if e := d.innermost(at); e != nil {
			key = d.keys.path(e.key)
		}
		return nil, d.errorAt(at, key, strings.TrimPrefix(de.Error(), "toml: "))
	}
	return d, nil
}

// errorAt is the one-line error at byte offset at, naming key when there is one.
func (d *tomlDoc) errorAt(at int, key []string, msg string) error {
	msg = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, msg)
	if key == nil {
		return fmt.Errorf("line %d: %s", d.lineAt(at), msg)
	}
	return fmt.Errorf("line %d (last key %q): %s", d.lineAt(at), keyString(key), msg)
}

// lineAt is the 1-based line of byte offset at.
func (d *tomlDoc) lineAt(at int) int {
	return sort.SearchInts(d.newlines, at) + 1
}

// offset is the byte offset of a 1-based line and byte column.
func (d *tomlDoc) offset(line, col int) int {
	at := col - 1
	if line > 1 && line-2 < len(d.newlines) {
		at += d.newlines[line-2] + 1
	}
	return min(max(at, 0), len(d.src))
}

// add records e, and its line as the first of its path and of every
// enclosing path not named before.
func (d *tomlDoc) add(e tomlEntry) {
	e.line = d.lineAt(e.start)
	d.entries = append(d.entries, e)
	for id := e.key; id > 0 && d.keys.nodes[id].line == 0; id = d.keys.nodes[id].parent {
		d.keys.nodes[id].line = e.line
	}
}

// addKeyValue records the key = value kv under the table table, and the
// keys of the inline tables in its value.
func (d *tomlDoc) addKeyValue(table int, kv *unstable.Node) {
	key, start, _, parts := d.keyOf(table, kv.Key())
	d.add(tomlEntry{key: key, start: start, end: int(kv.Raw.Offset + kv.Raw.Length), parts: parts})
	d.addValue(key, kv.Value())
}

// addValue records the keys of the inline tables in v, the value of key,
// also those inside its arrays.
func (d *tomlDoc) addValue(key int, v *unstable.Node) {
	if d.written > MaxConfigKeys {
		return // parseTOML refuses the file
	}
	switch v.Kind {
	case unstable.InlineTable:
		d.written++
		it := v.Children()
		for it.Next() {
			if kv := it.Node(); kv.Kind == unstable.KeyValue {
				d.addKeyValue(key, kv)
			}
		}
	case unstable.Array:
		it := v.Children()
		for it.Next() {
			d.addValue(key, it.Node())
		}
	default:
	}
}

// keyOf is the id of table's path followed by the parts of a (dotted)
// key, the span of the key's bytes, and the span of each of its parts.
func (d *tomlDoc) keyOf(table int, it unstable.Iterator) (key, start, end int, parts [][2]int) {
	key, start = table, -1
	for it.Next() && d.written <= MaxConfigKeys {
		k := it.Node()
		d.written++
		key = d.keys.child(key, string(k.Data))
		if start < 0 {
			start = int(k.Raw.Offset)
		}
		end = int(k.Raw.Offset + k.Raw.Length)
		parts = append(parts, [2]int{int(k.Raw.Offset), end})
	}
	return key, max(start, 0), end, parts
}

// innermost is the entry whose span holds offset at and starts last (the
// key inside an inline table rather than the table's own key), or nil.
func (d *tomlDoc) innermost(at int) *tomlEntry {
	var best *tomlEntry
	for i := range d.entries {
		e := &d.entries[i]
		if e.start <= at && at < max(e.end, e.start+1) && (best == nil || e.start >= best.start) {
			best = e
		}
	}
	return best
}

// line is the line of the first key that names path, or of its nearest
// enclosing table that the document names; 0 when it names none.
func (d *tomlDoc) line(path []string) int {
	for n := len(path); n > 0; n-- {
		if id := d.keys.find(path[:n]); id > 0 && d.keys.nodes[id].line > 0 {
			return d.keys.nodes[id].line
		}
	}
	return 0
}

// value is the decoded value at path, and whether there is one. A path
// through an array of tables has no value.
func (d *tomlDoc) value(path []string) (any, bool) {
	var v any = d.values
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// kind names the TOML type of the value at path in the words messages
// use: string, integer, float, bool, datetime, array, arrayhash (declared
// by [[path]] headers), hash; "" when there is none.
func (d *tomlDoc) kind(path []string) string {
	v, ok := d.value(path)
	if !ok {
		return ""
	}
	if _, ok := v.([]any); ok {
		id := d.keys.find(path)
		for _, e := range d.entries {
			if e.arrayTable && e.key == id {
				return "arrayhash"
			}
		}
	}
	return kindOf(v)
}

func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "bool"
	case time.Time, toml.LocalDate, toml.LocalTime, toml.LocalDateTime:
		return "datetime"
	case []any:
		return "array"
	case map[string]any:
		return "hash"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// keyString writes path as TOML writes a key: bare parts as they are,
// others double-quoted ("resources.\"my db\".bogus").
func keyString(path []string) string {
	var b strings.Builder
	for i, k := range path {
		if i > 0 {
			b.WriteByte('.')
		}
		if k != "" && strings.IndexFunc(k, func(r rune) bool { return !isBareKeyChar(r) }) < 0 {
			b.WriteString(k)
			continue
		}
		b.WriteByte('"')
		for _, r := range k {
			switch {
			case r == '"' || r == '\\':
				b.WriteByte('\\')
				b.WriteRune(r)
			case r == '\t':
				b.WriteString(`\t`)
			case r == '\n':
				b.WriteString(`\n`)
			case r == '\r':
				b.WriteString(`\r`)
			case r == '\b':
				b.WriteString(`\b`)
			case r == '\f':
				b.WriteString(`\f`)
			case r < 0x20 || r == 0x7f:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
	}
	return b.String()
}

func isBareKeyChar(r rune) bool {
	return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// failingKey names the key of the expression the parser stopped in, whose
// error is at offset at: the document parsed up to resume, so that
// expression begins on the first line after resume's that is neither
// blank nor a comment (unless the error is on that line). table is the
// table of the last header. nil when no key can be read there.
func failingKey(b []byte, resume, at int, table []string) []string {
	if i := bytes.IndexByte(b[min(resume, len(b)):], '\n'); i >= 0 && resume > 0 {
		resume += i + 1
	} else if resume > 0 {
		return nil
	}
	start := resume
	for start < at {
		end := len(b)
		if i := bytes.IndexByte(b[start:], '\n'); i >= 0 {
			end = start + i
		}
		line := bytes.TrimLeft(b[start:end], " \t")
		if at <= end || (len(bytes.TrimRight(line, " \t\r")) > 0 && line[0] != '#') {
			start = end - len(line)
			break
		}
		start = end + 1
	}
	if start >= len(b) || start > at {
		return nil
	}
	rest := b[start:]
	prefix := table
	if rest[0] == '[' {
		prefix = nil
		rest = bytes.TrimLeft(bytes.TrimPrefix(rest[1:], []byte("[")), " \t")
	}
	raw := scanRawKey(rest)
	if raw == nil {
		return nil
	}
	// Let the parser read the key, quotes and escapes and all.
	var p unstable.Parser
	p.Reset(append(append([]byte(nil), raw...), " = 0\n"...))
	if !p.NextExpression() || p.Expression().Kind != unstable.KeyValue {
		return nil
	}
	it := p.Expression().Key()
	path := prefix
	for it.Next() {
		path = append(path, string(it.Node().Data))
	}
	return path
}

// scanRawKey is the (dotted, perhaps quoted) key at the start of b as
// written, or nil when b does not start with one.
func scanRawKey(b []byte) []byte {
	i := 0
	for {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i >= len(b) {
			return nil
		}
		switch b[i] {
		case '"', '\'':
			q := b[i]
			for i++; ; i++ {
				if i >= len(b) || b[i] == '\n' {
					return nil
				}
				if q == '"' && b[i] == '\\' {
					i++
					continue
				}
				if b[i] == q {
					i++
					break
				}
			}
		default:
			j := i
			for i < len(b) && isBareKeyChar(rune(b[i])) {
				i++
			}
			if i == j {
				return nil
			}
		}
		end := i
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i >= len(b) || b[i] != '.' {
			return b[:end]
		}
		i++
	}
}

// tomlType is what custody.toml may hold at one key, read from the
// `toml` tags of rawConfig.
type tomlType struct {
	// kind is string, integer, boolean, strings (an array of strings),
	// table (the fields) or tables (a table of elem tables, any names).
	kind   string
	fields map[string]*tomlType
	elem   *tomlType
}

var configSchema = sync.OnceValue(func() *tomlType { return schemaOf(reflect.TypeFor[rawConfig]()) })

func schemaOf(t reflect.Type) *tomlType {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return &tomlType{kind: "string"}
	case reflect.Int:
		return &tomlType{kind: "integer"}
	case reflect.Bool:
		return &tomlType{kind: "boolean"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return &tomlType{kind: "strings"}
		}
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			return &tomlType{kind: "tables", elem: schemaOf(t.Elem())}
		}
	case reflect.Struct:
		s := &tomlType{kind: "table", fields: map[string]*tomlType{}}
		for i := range t.NumField() {
			f := t.Field(i)
			s.fields[f.Tag.Get("toml")] = schemaOf(f.Type)
		}
		return s
	default:
	}
	panic(fmt.Sprintf("observe: rawConfig holds a %s, which custody.toml cannot", t))
}

// checkSchema holds the document to rawConfig's shape: the first key
// (in document order) whose value has the wrong type is an error
// `line N (last key "k"): incompatible types: ...`; failing that, the
// first key rawConfig does not have is `line N: unknown key "k"`. The
// resources table itself is left to ParseConfig, which names its type.
func (d *tomlDoc) checkSchema() error {
	var unknown *tomlEntry
	for i := range d.entries {
		e := &d.entries[i]
		node := d.keys.nodes[e.key]
		path := node.head
		s := configSchema()
		for n := range path {
			var next *tomlType
			switch s.kind {
			case "table":
				next = s.fields[path[n]]
			case "tables":
				next = s.elem
			default:
				// A string or number cannot hold keys: the document
				// has a table where rawConfig has a value.
				return d.typeError(path[:n], s)
			}
			if next == nil {
				if unknown == nil {
					unknown = e
				}
				break
			}
			s = next
			last := n == node.depth-1
			if last || s.kind == "string" || s.kind == "integer" || s.kind == "boolean" || s.kind == "strings" {
				if err := d.checkValue(path[:n+1], s); err != nil {
					return err
				}
			}
			if v, _ := d.value(path[:n+1]); s.kind == "tables" && kindOf(v) != "hash" {
				// Not a table: what is below it is not custody's.
				if !last && unknown == nil {
					unknown = e
				}
				break
			}
		}
	}
	if unknown != nil {
		return fmt.Errorf("line %d: unknown key %q", unknown.line, keyString(d.keys.path(unknown.key)))
	}
	return nil
}

// legacyKey is the first entry, in document order, that names a key of
// discern's configuration (machine.LegacyKeys), or nil.
func (d *tomlDoc) legacyKey() *tomlEntry {
	for i := range d.entries {
		if _, ok := machine.LegacyKeyOf(d.keys.nodes[d.entries[i].key].head); ok {
			return &d.entries[i]
		}
	}
	return nil
}

// checkValue holds the value at path to s.
func (d *tomlDoc) checkValue(path []string, s *tomlType) error {
	v, ok := d.value(path)
	if !ok {
		return nil
	}
	switch s.kind {
	case "string":
		_, ok = v.(string)
	case "integer":
		var i int64
		if i, ok = v.(int64); ok && int64(int(i)) != i {
			return fmt.Errorf("line %d (last key %q): %d is out of range for int", d.line(path), keyString(path), i)
		}
	case "boolean":
		_, ok = v.(bool)
	case "strings":
		var a []any
		if a, ok = v.([]any); ok {
			for _, x := range a {
				if _, ok := x.(string); !ok {
					return d.typeErrorOf(path, kindOf(x), "string")
				}
			}
		}
	case "table":
		_, ok = v.(map[string]any)
	case "tables":
		ok = true
	}
	if !ok {
		return d.typeError(path, s)
	}
	return nil
}

func (d *tomlDoc) typeError(path []string, s *tomlType) error {
	want := s.kind
	switch s.kind {
	case "strings":
		want = "array of strings"
	case "tables":
		want = "table"
	}
	return d.typeErrorOf(path, d.kind(path), want)
}

func (d *tomlDoc) typeErrorOf(path []string, got, want string) error {
	return fmt.Errorf("line %d (last key %q): incompatible types: TOML value has type %s; destination has type %s", d.line(path), keyString(path), got, want)
}

// fill sets dst, a part of rawConfig, from v, a value checkSchema held to
// dst's shape; a key the document does not write stays zero (nil for a
// pointer).
func fill(dst reflect.Value, v any) {
	switch dst.Kind() {
	case reflect.Pointer:
		p := reflect.New(dst.Type().Elem())
		fill(p.Elem(), v)
		dst.Set(p)
	case reflect.String:
		s, _ := v.(string)
		dst.SetString(s)
	case reflect.Int:
		i, _ := v.(int64)
		dst.SetInt(i)
	case reflect.Bool:
		b, _ := v.(bool)
		dst.SetBool(b)
	case reflect.Slice:
		a, _ := v.([]any)
		s := reflect.MakeSlice(dst.Type(), 0, len(a))
		for _, x := range a {
			e := reflect.New(dst.Type().Elem()).Elem()
			fill(e, x)
			s = reflect.Append(s, e)
		}
		dst.Set(s)
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		out := reflect.MakeMapWithSize(dst.Type(), len(m))
		for k, x := range m {
			e := reflect.New(dst.Type().Elem()).Elem()
			fill(e, x)
			out.SetMapIndex(reflect.ValueOf(k), e)
		}
		dst.Set(out)
	case reflect.Struct:
		m, _ := v.(map[string]any)
		for i := range dst.NumField() {
			if x, ok := m[dst.Type().Field(i).Tag.Get("toml")]; ok {
				fill(dst.Field(i), x)
			}
		}
	default:
		panic(fmt.Sprintf("observe: rawConfig holds a %s, which custody.toml cannot", dst.Type()))
	}
}
