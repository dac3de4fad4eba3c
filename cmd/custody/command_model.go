package main

import (
	"reflect"
	"strings"
	"unicode"
)

// commandModel returns the model kong parses args against: the global
// flags and the one top-level command args name, or the whole CLI when
// args name none first (after global flags only) or ask for help or the
// version. Building kong's model of all 25 commands (their tags parsed,
// their help interpolated) costs about a third of a short command's CPU,
// and every command, hooks included, paid it on each run. The command's
// struct is the same either way, so its flags, help, errors and behaviour
// do not change (TestCommandModelParsesAsTheWholeCLI).
func commandModel(args []string) any {
	name, ok := leadingCommand(args)
	if !ok {
		return &CLI{}
	}
	field, ok := commandField(name)
	if !ok {
		return &CLI{}
	}
	t := reflect.StructOf([]reflect.StructField{
		{Name: "Globals", Type: reflect.TypeFor[Globals](), Anonymous: true},
		{Name: field.Name, Type: field.Type, Tag: field.Tag},
	})
	return reflect.New(t).Interface()
}

// modelGlobals returns the global flags kong set in a model commandModel
// returned.
func modelGlobals(model any) Globals {
	if cli, ok := model.(*CLI); ok {
		return cli.Globals
	}
	return reflect.ValueOf(model).Elem().Field(0).Interface().(Globals)
}

// globalsWithValue are the global flags that take the next argument as
// their value; the others are switches.
var globalsWithValue = map[string]bool{"-C": true, "--chdir": true, "--lock-timeout": true, "--remote-timeout": true, "--observe-timeout": true}

// leadingCommand returns the first word of args that is not a global flag
// or its value, and false when something else comes first (help, the
// version, an unknown flag) or help is asked for anywhere: kong then
// parses the whole CLI, as it always did.
func leadingCommand(args []string) (string, bool) {
	for _, a := range args {
		if a == "--help" || a == "-h" || a == "--" {
			return "", false
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--json" || a == "--debug":
		case globalsWithValue[a]:
			i++ // the value
		case strings.HasPrefix(a, "--") && globalsWithValue[a[:max(strings.IndexByte(a, '='), 0)]]:
		case strings.HasPrefix(a, "-"):
			return "", false
		default:
			return a, true
		}
	}
	return "", false
}

// commandField returns the CLI's field of the top-level command named
// name: its `name` tag, else its Go name as kong spells it.
func commandField(name string) (reflect.StructField, bool) {
	t := reflect.TypeFor[CLI]()
	for i := range t.NumField() {
		f := t.Field(i)
		if _, cmd := f.Tag.Lookup("cmd"); !cmd {
			continue
		}
		n := f.Tag.Get("name")
		if n == "" {
			n = kongName(f.Name)
		}
		if n == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// kongName spells a Go field name as kong names its command: lower case,
// a dash before each inner capital that starts a word.
func kongName(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
