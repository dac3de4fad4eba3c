package machine

import (
	"reflect"
	"strings"
	"time"

	json "github.com/custody-sh/custody/machine/bytejson"
)

// JSONSchema returns a JSON Schema (draft 2020-12) of the JSON encoding/json
// gives v's type, drawn from the type itself: a struct is an object whose
// properties are its json-tagged fields (embedded structs flattened), with
// every field that is always written required and no other property
// allowed; a pointer, slice or map may also be null where encoding/json
// writes null for it; time.Time is a date-time string; json.RawMessage and
// interfaces are any value. id and title name the schema. It is what
// docs/schemas/ is generated from, so a changed type changes its schema.
func JSONSchema(v any, id, title string) map[string]any {
	s := schemaOf(reflect.TypeOf(v), false)
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["$id"] = id
	s["title"] = title
	s["$comment"] = StringBytesNote
	return s
}

// StringBytesNote is what every schema says of its strings: they carry
// bytes, those that are not UTF-8 escaped (docs/formats.md, decision 0220).
const StringBytesNote = "Every string carries exact bytes: a byte that is not part of valid UTF-8 is written as the escape \\udcXX (XX its value, 80-ff; docs/formats.md, 'Names are bytes')."

// schemaOf draws t; nullable adds null to its types (a nil pointer, slice
// or map that is written).
func schemaOf(t reflect.Type, nullable bool) map[string]any {
	timeType, rawType := reflect.TypeFor[time.Time](), reflect.TypeFor[json.RawMessage]()
	typed := func(name string) map[string]any {
		if nullable {
			return map[string]any{"type": []any{name, "null"}}
		}
		return map[string]any{"type": name}
	}
	switch {
	case t == nil || t.Kind() == reflect.Interface || t == rawType:
		return map[string]any{}
	case t == timeType:
		s := typed("string")
		s["format"] = "date-time"
		return s
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem(), true)
	case reflect.String:
		return typed("string")
	case reflect.Bool:
		return typed("boolean")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return typed("integer")
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s := typed("integer")
		s["minimum"] = 0
		return s
	case reflect.Float32, reflect.Float64:
		return typed("number")
	case reflect.Slice, reflect.Array:
		s := typed("array")
		s["items"] = schemaOf(t.Elem(), false)
		if t.Kind() == reflect.Array {
			s["minItems"], s["maxItems"] = t.Len(), t.Len()
		}
		return s
	case reflect.Map:
		s := typed("object")
		s["additionalProperties"] = schemaOf(t.Elem(), false)
		return s
	case reflect.Struct:
		props := map[string]any{}
		var required []string
		structFields(t, props, &required)
		s := typed("object")
		s["properties"] = props
		s["additionalProperties"] = false
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	return map[string]any{}
}

// structFields adds t's json fields to props, flattening embedded structs
// as encoding/json does.
func structFields(t reflect.Type, props map[string]any, required *[]string) {
	rawType := reflect.TypeFor[json.RawMessage]()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				structFields(ft, props, required)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		optional := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		k := f.Type.Kind()
		nullable := !optional && (k == reflect.Slice || k == reflect.Map) && f.Type != rawType
		ps := schemaOf(f.Type, nullable)
		if f.Type == rawType && !optional {
			ps = map[string]any{} // null or any value
		}
		props[name] = ps
		if !optional {
			*required = append(*required, name)
		}
	}
}
