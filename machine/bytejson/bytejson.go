// Package bytejson reads and writes JSON whose strings carry exact bytes.
//
// Paths, file names, ref names and remote URLs are byte strings, and
// encoding/json writes every byte that is not part of valid UTF-8 as
// U+FFFD: a file named "caf\xe9.txt" comes back as "caf\ufffd.txt", a
// digest over the re-encoded body no longer matches the one written, and a
// path read back names nothing on disk. Every file and envelope custody
// writes goes through this package instead.
//
// The encoding (docs/formats.md, "Names are bytes"): a string that is
// valid UTF-8 is written exactly as encoding/json writes it. In a string
// that is not, each byte that does not belong to a valid UTF-8 sequence is
// written as the escape \udcXX, where XX is the byte (80 to ff): a lone
// low surrogate, which no valid UTF-8 string can produce, so the mapping
// is one to one (Python calls it surrogateescape, PEP 383). Reading turns
// each such escape back into its byte; any other lone surrogate is an
// error, never a silent U+FFFD. The output is always valid UTF-8 and valid
// JSON, so any reader parses it; a reader that does not know the escape
// sees U+FFFD where custody sees the byte.
//
// The rest is encoding/json's behaviour (the v1 semantics of
// github.com/go-json-experiment/json), so documents of valid UTF-8 are
// byte for byte what custody wrote before, and every digest over them
// still holds.
package bytejson

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// RawMessage is a raw encoded JSON value, kept byte for byte (the same
// type as encoding/json's, so values pass between the two unchanged).
type RawMessage = stdjson.RawMessage

// Number is a JSON number kept as its literal text (Decoder.UseNumber); it
// is written back as that number.
type Number = jsonv1.Number

// Delim is an array or object delimiter token: one of [ ] { }.
type Delim = stdjson.Delim

// Token is what Decoder.Token returns: a Delim, a bool, a float64 (or a
// Number), a string, or nil for null.
type Token = stdjson.Token

// ErrInvalidEscape is wrapped by every error for a string holding an
// escape this encoding cannot have written: a lone surrogate that is not
// the escape of a byte, or a malformed escape.
var ErrInvalidEscape = errors.New("a string escape that names no byte")

// options is encoding/json's behaviour with strings kept exact.
func options(escapeHTML bool, extra ...json.Options) json.Options {
	return optionsNumbers(escapeHTML, false, extra...)
}

// optionsNumbers is options, with numbers decoded into an empty interface
// as Number when useNumber is set (Decoder.UseNumber).
func optionsNumbers(escapeHTML, useNumber bool, extra ...json.Options) json.Options {
	base := baseOptions()[b2i(escapeHTML)][b2i(useNumber)]
	if len(extra) == 0 {
		return base
	}
	return json.JoinOptions(append([]json.Options{base}, extra...)...)
}

// baseOptions are the four sets optionsNumbers starts from, by escapeHTML
// and useNumber, made once: the string marshalers each holds keep what
// they learned of every type they met (whether an arshaler of theirs
// applies), and a set made per call learned it again for every value, a
// fifth of reading a journal line.
var baseOptions = sync.OnceValue(func() (sets [2][2]json.Options) {
	for e := range 2 {
		for u := range 2 {
			unmarshal := unmarshalString
			if u == 1 {
				unmarshal = unmarshalStringNumber
			}
			opts := []json.Options{
				jsonv1.DefaultOptionsV1(),
				json.WithMarshalers(json.MarshalToFunc(marshalString)),
				json.WithUnmarshalers(json.UnmarshalFromFunc(unmarshal)),
			}
			if e == 0 {
				opts = append(opts, jsontext.EscapeForHTML(false))
			}
			sets[e][u] = json.JoinOptions(opts...)
		}
	}
	return sets
})

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Marshal returns the JSON encoding of v, its strings exact.
func Marshal(v any) ([]byte, error) {
	return json.Marshal(v, options(true))
}

// MarshalIndent is Marshal with each element on its own line, indented
// as encoding/json's MarshalIndent does.
func MarshalIndent(v any, prefix, indent string) ([]byte, error) {
	b, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := stdjson.Indent(&out, b, prefix, indent); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Unmarshal decodes the JSON document data into v, turning each byte
// escape back into its byte. Anything after the document is an error.
func Unmarshal(data []byte, v any) error {
	return wrapErr(json.Unmarshal(data, v, options(true)))
}

// Valid reports whether data is one valid JSON document.
func Valid(data []byte) bool { return stdjson.Valid(data) }

// Compact appends src to dst with insignificant space removed; strings,
// escapes included, are copied as they are.
func Compact(dst *bytes.Buffer, src []byte) error { return stdjson.Compact(dst, src) }

// Indent appends an indented form of src to dst; strings, escapes
// included, are copied as they are.
func Indent(dst *bytes.Buffer, src []byte, prefix, indent string) error {
	return stdjson.Indent(dst, src, prefix, indent)
}

// Encoder writes JSON values to a stream, one per line, as
// encoding/json's Encoder does, strings exact.
type Encoder struct {
	w              io.Writer
	prefix, indent string
	escapeHTML     bool
}

// NewEncoder returns an Encoder writing to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w, escapeHTML: true} }

// SetIndent makes Encode indent each value as MarshalIndent does.
func (e *Encoder) SetIndent(prefix, indent string) { e.prefix, e.indent = prefix, indent }

// SetEscapeHTML says whether <, > and & in strings are escaped (they are
// unless it is set false).
func (e *Encoder) SetEscapeHTML(on bool) { e.escapeHTML = on }

// Encode writes v's JSON and a newline.
func (e *Encoder) Encode(v any) error {
	b, err := json.Marshal(v, options(e.escapeHTML))
	if err != nil {
		return err
	}
	if e.prefix != "" || e.indent != "" {
		var out bytes.Buffer
		if err := stdjson.Indent(&out, b, e.prefix, e.indent); err != nil {
			return err
		}
		b = out.Bytes()
	}
	b = append(b, '\n')
	_, err = e.w.Write(b)
	return err
}

// Decoder reads JSON values from a stream, as encoding/json's Decoder
// does, strings exact.
type Decoder struct {
	dec       *jsontext.Decoder
	strict    bool
	useNumber bool
}

// NewDecoder returns a Decoder reading from r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{dec: jsontext.NewDecoder(r, options(true))}
}

// DisallowUnknownFields makes Decode refuse an object member that names
// no field of the struct it decodes into.
func (d *Decoder) DisallowUnknownFields() { d.strict = true }

// UseNumber makes Token, and Decode into an empty interface, give numbers
// as Number rather than float64.
func (d *Decoder) UseNumber() { d.useNumber = true }

// Decode reads the next JSON value into v; io.EOF when there is none.
func (d *Decoder) Decode(v any) error {
	var extra []json.Options
	if d.strict {
		extra = append(extra, json.RejectUnknownMembers(true))
	}
	opts := optionsNumbers(true, d.useNumber, extra...)
	err := json.UnmarshalDecode(d.dec, v, opts)
	if errors.Is(err, io.EOF) && d.dec.StackDepth() == 0 {
		return io.EOF
	}
	return wrapErr(err)
}

// More reports whether the current array or object has another element.
func (d *Decoder) More() bool {
	k := d.dec.PeekKind()
	return k != 0 && k != ']' && k != '}'
}

// Token returns the next JSON token: a Delim, a bool, a float64 or Number,
// a string (its byte escapes turned back into bytes), or nil; io.EOF at
// the end of the input.
func (d *Decoder) Token() (Token, error) {
	switch d.dec.PeekKind() {
	case '"':
		raw, err := d.dec.ReadValue()
		if err != nil {
			return nil, err
		}
		return Unquote(raw)
	case 0:
		_, err := d.dec.ReadToken()
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	tok, err := d.dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch k := tok.Kind(); k {
	case '{', '}', '[', ']':
		return Delim(k), nil
	case 'n':
		return nil, nil
	case 't', 'f':
		return tok.Bool(), nil
	case '0':
		if d.useNumber {
			return Number(tok.String()), nil
		}
		f, err := strconv.ParseFloat(tok.String(), 64)
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", tok.String(), err)
		}
		return f, nil
	default:
		return nil, fmt.Errorf("unexpected JSON token %q", k)
	}
}

// Quote returns s as one JSON string, as Marshal writes it: encoding/json's
// form when s is valid UTF-8, else with each stray byte as \udcXX.
func Quote(s string) string {
	b, err := Marshal(s)
	if err != nil { // a string always marshals
		return strconv.Quote(s)
	}
	return string(b)
}

// Unquote decodes one JSON string literal (quotes included), turning each
// \udc80–\udcff escape back into its byte. Raw bytes that are not UTF-8
// are kept as they are.
func Unquote(raw []byte) (string, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", fmt.Errorf("%w: %q is not a JSON string", ErrInvalidEscape, raw)
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), nil
	}
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(body) {
			return "", fmt.Errorf("%w: a string ends in a backslash", ErrInvalidEscape)
		}
		switch e := body[i+1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(body[i+2:])
			if !ok {
				return "", fmt.Errorf("%w: a malformed \\u escape", ErrInvalidEscape)
			}
			i += 6
			switch {
			case r >= 0xd800 && r < 0xdc00: // a high surrogate needs its low one
				lo, ok := -1, false
				if i+1 < len(body) && body[i] == '\\' && body[i+1] == 'u' {
					lo, ok = hex4(body[i+2:])
				}
				if !ok || lo < 0xdc00 || lo >= 0xe000 {
					return "", fmt.Errorf("%w: a lone high surrogate \\u%04x", ErrInvalidEscape, r)
				}
				b.WriteRune(0x10000 + (rune(r)-0xd800)<<10 + (rune(lo) - 0xdc00))
				i += 6
			case r >= 0xdc80 && r < 0xdd00: // the escape of one byte
				b.WriteByte(byte(r - 0xdc00))
			case r >= 0xdc00 && r < 0xe000:
				return "", fmt.Errorf("%w: a lone low surrogate \\u%04x", ErrInvalidEscape, r)
			default:
				b.WriteRune(rune(r))
			}
			continue
		default:
			return "", fmt.Errorf("%w: \\%c", ErrInvalidEscape, e)
		}
		i += 2
	}
	return b.String(), nil
}

// hex4 reads the four hex digits at the start of b.
func hex4(b []byte) (int, bool) {
	if len(b) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 32)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

// quoteBytes writes s, which is not valid UTF-8, as one JSON string: each
// valid run as the encoder writes it, each stray byte as \udcXX.
func quoteBytes(s string, opts json.Options) ([]byte, error) {
	out := []byte{'"'}
	for len(s) > 0 {
		n := validPrefix(s)
		if n > 0 {
			q, err := json.Marshal(s[:n], opts)
			if err != nil {
				return nil, err
			}
			out = append(out, q[1:len(q)-1]...)
			s = s[n:]
			continue
		}
		out = fmt.Appendf(out, `\udc%02x`, s[0])
		s = s[1:]
	}
	return append(out, '"'), nil
}

// validPrefix is the length of s's longest prefix that is valid UTF-8.
func validPrefix(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(s)
}

// wrapErr makes a string's bad escape matchable with errors.Is.
func wrapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrInvalidEscape) {
		return err
	}
	var se *json.SemanticError
	if errors.As(err, &se) && errors.Is(se.Err, ErrInvalidEscape) {
		return fmt.Errorf("%w (%v)", ErrInvalidEscape, err)
	}
	return err
}
