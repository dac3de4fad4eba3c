package bytejson

import (
	"encoding"
	stdjson "encoding/json"
	"errors"
	"reflect"
	"slices"
	"unicode/utf8"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The marshal and unmarshal hooks see every value (their type is any) and
// take only strings: a value of any other kind, or a type with JSON or
// text methods of its own, is left to the default (errors.ErrUnsupported),
// so only the treatment of string bytes differs from encoding/json.

var (
	jsonMarshaler   = reflect.TypeFor[stdjson.Marshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	jsonUnmarshaler = reflect.TypeFor[stdjson.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	emptyInterface  = reflect.TypeFor[any]()
)

// marshalString writes a string that is not valid UTF-8 with its stray
// bytes escaped; every other value is written as encoding/json would.
func marshalString(enc *jsontext.Encoder, v any) error {
	var s string
	switch p := v.(type) {
	case *string:
		s = *p
	default:
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Pointer {
			return errors.ErrUnsupported
		}
		switch elem := rv.Elem(); {
		case elem.Kind() == reflect.Map && elem.Type().Key().Kind() == reflect.String:
			return marshalMap(enc, elem)
		case elem.Kind() != reflect.String || hasMethods(elem.Type(), jsonMarshaler, textMarshaler):
			return errors.ErrUnsupported
		default:
			s = elem.String()
		}
	}
	if utf8.ValidString(s) {
		return errors.ErrUnsupported
	}
	q, err := quoteBytes(s, enc.Options())
	if err != nil {
		return err
	}
	return enc.WriteValue(q)
}

// marshalMap writes a map with a string key that is not valid UTF-8 as
// encoding/json would (members sorted by key bytes), its keys escaped:
// the default writer re-quotes each key after sorting, which would lose
// them. A map whose keys are all UTF-8 is left to the default.
func marshalMap(enc *jsontext.Encoder, m reflect.Value) error {
	kt := m.Type().Key()
	if m.IsNil() || hasMethods(kt, jsonMarshaler, textMarshaler) {
		return errors.ErrUnsupported
	}
	keys := make([]string, 0, m.Len())
	stray := false
	for iter := m.MapRange(); iter.Next(); {
		k := iter.Key().String()
		stray = stray || !utf8.ValidString(k)
		keys = append(keys, k)
	}
	if !stray {
		return errors.ErrUnsupported
	}
	slices.Sort(keys)
	opts := enc.Options()
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	key := reflect.New(kt).Elem()
	for _, k := range keys {
		q, err := quoteBytes(k, opts)
		if err != nil {
			return err
		}
		if err := enc.WriteValue(q); err != nil {
			return err
		}
		key.SetString(k)
		if err := json.MarshalEncode(enc, m.MapIndex(key).Interface(), opts); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// unmarshalString reads a JSON string into a string (or an empty
// interface, and through it into the strings of maps and arrays), turning
// each byte escape back into its byte.
func unmarshalString(dec *jsontext.Decoder, v any) error {
	return unmarshalExact(dec, v, false)
}

// unmarshalStringNumber is unmarshalString that gives a number decoded
// into an empty interface as its literal text (Number).
func unmarshalStringNumber(dec *jsontext.Decoder, v any) error {
	return unmarshalExact(dec, v, true)
}

func unmarshalExact(dec *jsontext.Decoder, v any, useNumber bool) error {
	kind := dec.PeekKind()
	if p, ok := v.(*string); ok {
		if kind != '"' {
			return errors.ErrUnsupported
		}
		s, err := readString(dec)
		if err != nil {
			return err
		}
		*p = s
		return nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer {
		return errors.ErrUnsupported
	}
	elem := rv.Elem()
	switch {
	case elem.Kind() == reflect.String && kind == '"' && !hasMethods(elem.Type(), jsonUnmarshaler, textUnmarshaler):
		s, err := readString(dec)
		if err != nil {
			return err
		}
		elem.SetString(s)
		return nil
	case elem.Type() == emptyInterface && elem.IsNil():
		return unmarshalAny(dec, kind, elem, useNumber)
	}
	return errors.ErrUnsupported
}

// unmarshalAny decodes into an empty interface as encoding/json does
// (objects as map[string]any, arrays as []any), keeping strings exact.
func unmarshalAny(dec *jsontext.Decoder, kind jsontext.Kind, elem reflect.Value, useNumber bool) error {
	switch kind {
	case '0':
		if !useNumber {
			return errors.ErrUnsupported
		}
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		elem.Set(reflect.ValueOf(Number(raw)))
	case '"':
		s, err := readString(dec)
		if err != nil {
			return err
		}
		elem.Set(reflect.ValueOf(s))
	case '{':
		m := map[string]any{}
		if err := json.UnmarshalDecode(dec, &m, dec.Options()); err != nil {
			return err
		}
		elem.Set(reflect.ValueOf(m))
	case '[':
		a := []any{}
		if err := json.UnmarshalDecode(dec, &a, dec.Options()); err != nil {
			return err
		}
		elem.Set(reflect.ValueOf(a))
	default:
		return errors.ErrUnsupported
	}
	return nil
}

// readString reads the next value, a JSON string, with its escapes undone.
func readString(dec *jsontext.Decoder) (string, error) {
	raw, err := dec.ReadValue()
	if err != nil {
		return "", err
	}
	return Unquote(raw)
}

// hasMethods reports whether t or *t implements any of the interfaces.
func hasMethods(t reflect.Type, ifaces ...reflect.Type) bool {
	pt := reflect.PointerTo(t)
	for _, i := range ifaces {
		if t.Implements(i) || pt.Implements(i) {
			return true
		}
	}
	return false
}
