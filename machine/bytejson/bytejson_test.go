package bytejson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine/bytejson"
)

type name string

type upper string

func (u upper) MarshalJSON() ([]byte, error) { return json.Marshal(strings.ToUpper(string(u))) }

func (u *upper) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*u = upper(strings.ToLower(s))
	return nil
}

type inner struct {
	Path string `json:"path"`
}

type doc struct {
	Path    string            `json:"path"`
	Branch  name              `json:"branch,omitempty"`
	Ptr     *string           `json:"ptr,omitempty"`
	Names   []string          `json:"names"`
	ByName  map[string]string `json:"by_name"`
	Nested  []inner           `json:"nested"`
	Any     any               `json:"any"`
	Raw     json.RawMessage   `json:"raw,omitempty"`
	Upper   upper             `json:"upper"`
	N       int               `json:"n"`
	F       float64           `json:"f"`
	At      time.Time         `json:"at"`
	Skipped string            `json:"-"`
}

// randomName is a name of 1–12 bytes drawn from every byte but NUL and
// '/', weighted toward the bytes that are not UTF-8 on their own.
func randomName(r *rand.Rand) string {
	n := 1 + r.IntN(12)
	b := make([]byte, 0, n)
	for len(b) < n {
		c := byte(r.IntN(256))
		if c == 0 || c == '/' {
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

func TestRoundTripRandomBytes(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(20, 1))
	invalid := 0
	for i := 0; i < 2000; i++ {
		s, k, v := randomName(r), randomName(r), randomName(r)
		if !utf8.ValidString(s) {
			invalid++
		}
		in := doc{
			Path: s, Branch: name(v), Ptr: &k,
			Names:  []string{s, v, ""},
			ByName: map[string]string{k: s, v: k},
			Nested: []inner{{Path: v}},
			Any:    map[string]any{k: []any{s, 1.5, true, nil}},
			Raw:    json.RawMessage(`{"a":[1,2]}`),
			Upper:  "abc",
			N:      i, F: 0.1,
			At: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC),
		}
		b, err := bytejson.Marshal(in)
		if err != nil {
			t.Fatalf("marshal %q: %v", s, err)
		}
		if !utf8.Valid(b) || !json.Valid(b) {
			t.Fatalf("output is not valid UTF-8 JSON: %q", b)
		}
		var out doc
		if err := bytejson.Unmarshal(b, &out); err != nil {
			t.Fatalf("unmarshal %q: %v", b, err)
		}
		if diff := cmp.Diff(in, out); diff != "" {
			t.Fatalf("round trip of %q changed (-in +out):\n%s", b, diff)
		}
		again, err := bytejson.Marshal(out)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("re-encoding is not the same bytes:\n%s\n%s", b, again)
		}
	}
	if invalid < 500 {
		t.Fatalf("only %d of 2000 names were not UTF-8: the property is not exercised", invalid)
	}
}

// TestValidUTF8IsEncodingJSON: a document of valid UTF-8 is byte for byte
// what encoding/json writes, so digests over earlier files still hold.
func TestValidUTF8IsEncodingJSON(t *testing.T) {
	t.Parallel()
	s := "a<b>&c \u2028\u2029 \x01\x1f\t\n\r\b\f \"quoted\" \\ é 日本 😀 \x7f"
	values := []any{
		doc{Path: s, Names: nil, ByName: nil, Upper: "x", F: 1e21, At: time.Unix(1700000000, 5).UTC()},
		doc{Path: "", Names: []string{}, ByName: map[string]string{"b": s, "a": ""}, Any: []any{1.0, "x", map[string]any{"z": nil}}},
		map[string]any{"k": s, "n": 3, "f": 2.5e-7, "big": 1 << 53},
		[]string{s, "", "/path/to/x"},
		json.RawMessage(`{"b": [1, 2 ], "a" :"x"}`),
		struct {
			A int     `json:"a,string"`
			B *int    `json:"b"`
			C []byte  `json:"c"`
			D float32 `json:"d"`
		}{A: 5, C: []byte{0xff, 0, 1}, D: 0.3},
	}
	for _, v := range values {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := bytejson.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("bytejson.Marshal(%#v)\n got %s\nwant %s", v, got, want)
		}
		wantI, _ := json.MarshalIndent(v, "", "  ")
		gotI, _ := bytejson.MarshalIndent(v, "", "  ")
		if !bytes.Equal(gotI, wantI) {
			t.Errorf("MarshalIndent differs:\n got %s\nwant %s", gotI, wantI)
		}
		var wantE, gotE bytes.Buffer
		je := json.NewEncoder(&wantE)
		je.SetEscapeHTML(false)
		je.SetIndent("", " ")
		be := bytejson.NewEncoder(&gotE)
		be.SetEscapeHTML(false)
		be.SetIndent("", " ")
		if err := je.Encode(v); err != nil {
			t.Fatal(err)
		}
		if err := be.Encode(v); err != nil {
			t.Fatal(err)
		}
		if gotE.String() != wantE.String() {
			t.Errorf("Encoder differs:\n got %s\nwant %s", gotE.String(), wantE.String())
		}
	}
}

func TestStrayBytesAreEscapedOneToOne(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"caf\xe9.txt":         `"caf\udce9.txt"`,
		"r\xe9sum\xe9s":       `"r\udce9sum\udce9s"`,
		"\xff\xfe":            `"\udcff\udcfe"`,
		"a<\xe9>":             `"a\u003c\udce9\u003e"`,
		"\xed\xb3\xa9":        `"\udced\udcb3\udca9"`, // the UTF-8 of a surrogate is three stray bytes
		"日\xe6\x97":           `"日\udce6\udc97"`,
		"new\nline\x80":       `"new\nline\udc80"`,
		"é\xc3":               `"é\udcc3"`,
		"\xf4\x90\x80\x80 ok": `"\udcf4\udc90\udc80\udc80 ok"`, // beyond U+10FFFF
	}
	for in, want := range cases {
		got, err := bytejson.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("Marshal(%q) = %s, want %s", in, got, want)
		}
		var back string
		if err := bytejson.Unmarshal(got, &back); err != nil || back != in {
			t.Errorf("Unmarshal(%s) = %q, %v; want %q", got, back, err, in)
		}
		if q := bytejson.Quote(in); q != want {
			t.Errorf("Quote(%q) = %s, want %s", in, q, want)
		}
	}
}

func TestEscapesThatNameNoByteAreRefused(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		`"\udc41"`,       // a low surrogate below the byte range
		`"\udd00"`,       // above it
		`"\ud800"`,       // a lone high surrogate
		`"\ud800\u0041"`, // a high surrogate with no low one
		`"\ud800x"`,      // ... or nothing after it
		`"\u12"`,         // malformed
		`"\q"`,           // not an escape
		`{"path":"\udfff"}`,
	} {
		var v any
		err := bytejson.Unmarshal([]byte(raw), &v)
		if !errors.Is(err, bytejson.ErrInvalidEscape) && err == nil {
			t.Errorf("Unmarshal(%s) = %q, nil; want an error", raw, v)
		}
		var d struct {
			Path string `json:"path"`
		}
		if err := bytejson.Unmarshal([]byte(raw), &d); err == nil && strings.HasPrefix(raw, "{") {
			t.Errorf("Unmarshal(%s) into a struct = %q, nil; want an error", raw, d.Path)
		}
	}
	// A surrogate pair is one character, not two bytes.
	var s string
	if err := bytejson.Unmarshal([]byte(`"\ud83d\ude00"`), &s); err != nil || s != "😀" {
		t.Fatalf(`pair = %q, %v`, s, err)
	}
}

func TestMethodsAreStillCalled(t *testing.T) {
	t.Parallel()
	b, err := bytejson.Marshal(struct {
		U upper `json:"u"`
	}{U: "abc"})
	if err != nil || string(b) != `{"u":"ABC"}` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var out struct {
		U upper `json:"u"`
	}
	if err := bytejson.Unmarshal([]byte(`{"u":"XYZ"}`), &out); err != nil || out.U != "xyz" {
		t.Fatalf("Unmarshal = %q, %v", out.U, err)
	}
}

func TestDecoderStream(t *testing.T) {
	t.Parallel()
	in := "{\"path\":\"a\\udce9\"}\n{\"path\":\"b\"}\n"
	dec := bytejson.NewDecoder(strings.NewReader(in))
	var got []string
	for {
		var v inner
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v.Path)
	}
	if diff := cmp.Diff([]string{"a\xe9", "b"}, got); diff != "" {
		t.Fatal(diff)
	}

	strict := bytejson.NewDecoder(strings.NewReader(`{"path":"x","extra":1}`))
	strict.DisallowUnknownFields()
	var v inner
	if err := strict.Decode(&v); err == nil {
		t.Fatal("an unknown field was accepted")
	}
	loose := bytejson.NewDecoder(strings.NewReader(`{"path":"x","extra":1}`))
	if err := loose.Decode(&v); err != nil || v.Path != "x" {
		t.Fatalf("loose decode = %q, %v", v.Path, err)
	}
}

func TestDecoderTokens(t *testing.T) {
	t.Parallel()
	dec := bytejson.NewDecoder(strings.NewReader(`{"k\udce9":[1.5,true,null,"v\udcff"],"n":12345678901234567890}`))
	dec.UseNumber()
	var got []any
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tok)
	}
	want := []any{
		bytejson.Delim('{'), "k\xe9", bytejson.Delim('['), bytejson.Number("1.5"), true, nil, "v\xff",
		bytejson.Delim(']'), "n", bytejson.Number("12345678901234567890"), bytejson.Delim('}'),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatal(diff)
	}

	numbers := bytejson.NewDecoder(strings.NewReader(`{"a":[1.50,{"b":12345678901234567890}],"s":"x\udce9"}`))
	numbers.UseNumber()
	var doc any
	if err := numbers.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	wantDoc := map[string]any{"a": []any{bytejson.Number("1.50"), map[string]any{"b": bytejson.Number("12345678901234567890")}}, "s": "x\xe9"}
	if diff := cmp.Diff(wantDoc, doc); diff != "" {
		t.Fatalf("UseNumber decode (-want +got):\n%s", diff)
	}

	if b, err := bytejson.Marshal(doc); err != nil || string(b) != `{"a":[1.50,{"b":12345678901234567890}],"s":"x\udce9"}` {
		t.Fatalf("numbers read with UseNumber are written back as %s, %v", b, err)
	}

	more := bytejson.NewDecoder(strings.NewReader(`[1,2]`))
	if _, err := more.Token(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for more.More() {
		var x float64
		if err := more.Decode(&x); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("More saw %d elements, want 2", n)
	}
}
