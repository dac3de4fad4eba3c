package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/google/go-cmp/cmp"
)

// parsed is everything a parse of the command line decides: what kong
// printed, whether it exited and with what, its error, the command chosen,
// that command's struct and the globals.
type parsed struct {
	Stdout, Stderr string
	Exit           int
	Err            string
	Command        string
	Target         string
	Globals        Globals
}

// parseWith parses args against model as run does.
func parseWith(t *testing.T, model any, args []string) parsed {
	t.Helper()
	var out, errOut strings.Builder
	p := parsed{Exit: -1}
	parser, err := kong.New(model, append(cliOptions(),
		kong.Writers(&out, &errOut),
		kong.Exit(func(c int) { panic(exitSignal{c}) }),
		kong.Vars{"version": "custody test"},
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)...)
	if err != nil {
		t.Fatalf("%q: building the model: %v", args, err)
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				ex, ok := r.(exitSignal)
				if !ok {
					panic(r)
				}
				p.Exit = ex.code
			}
		}()
		kctx, err := parser.Parse(args)
		if err != nil {
			p.Err = err.Error()
			return
		}
		p.Command = kctx.Command()
		if n := kctx.Selected(); n != nil {
			p.Target = fmt.Sprintf("%T %+v", n.Target.Interface(), n.Target.Interface())
		}
	}()
	p.Stdout, p.Stderr = out.String(), errOut.String()
	p.Globals = modelGlobals(model)
	return p
}

// sampleValue is a value kong accepts for a flag or argument of v's type.
func sampleValue(v *kong.Value) string {
	if v.Enum != "" {
		return strings.Split(v.Enum, ",")[0]
	}
	switch v.Target.Type() {
	case reflect.TypeFor[time.Duration]():
		return "3s"
	}
	switch v.Target.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Int32:
		return "2"
	}
	return "x y"
}

// commandLines are argument vectors for every command of the whole CLI:
// alone, with each of its flags and its arguments, with global flags
// before and after it, asking for help, and with what kong refuses.
func commandLines(t *testing.T) [][]string {
	t.Helper()
	app, err := cliModel()
	if err != nil {
		t.Fatal(err)
	}
	lines := [][]string{{}, {"--help"}, {"--version"}, {"plna"}, {"--json"}, {"--bogus", "plan"}, {"-C"}, {"--chdir=/x"}, {"--", "plan"}}
	var walk func(n *kong.Node, path []string)
	walk = func(n *kong.Node, path []string) {
		if n.Type == kong.CommandNode {
			path = append(path[:len(path):len(path)], n.Name)
			var full []string
			full = append(full, path...)
			for _, a := range n.Positional {
				full = append(full, sampleValue(a))
			}
			lines = append(lines, path, full,
				append(append([]string{}, full...), "--help"),
				append(append([]string{}, path...), "-h"),
				append(append([]string{}, full...), "--bogus"),
				append(append([]string{}, full...), "extra", "words"),
				append([]string{"--json", "-C", "/d", "--lock-timeout", "4s", "--debug"}, full...),
				append([]string{"--remote-timeout=5s", "--observe-timeout", "1m"}, full...),
				append(append([]string{}, full...), "--json", "--chdir=/e", "--lock-timeout=bad"),
			)
			for _, f := range n.Flags {
				with := append([]string{}, full...)
				if f.IsBool() {
					with = append(with, "--"+f.Name)
				} else {
					with = append(with, "--"+f.Name, sampleValue(f.Value))
					lines = append(lines, append(append([]string{}, full...), "--"+f.Name))
				}
				lines = append(lines, with)
			}
		}
		for _, c := range n.Children {
			walk(c, path)
		}
	}
	walk(app.Node, nil)
	return lines
}

// TestCommandModelParsesAsTheWholeCLI: for every command line, the model
// of the one command it names parses exactly as the whole CLI does: the
// same output, exit, error, command, flags and globals.
func TestCommandModelParsesAsTheWholeCLI(t *testing.T) {
	lines := commandLines(t)
	narrowed := 0
	for _, args := range lines {
		model := commandModel(args)
		if _, whole := model.(*CLI); !whole {
			narrowed++
		}
		want, got := parseWith(t, &CLI{}, args), parseWith(t, model, args)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("custody %q parses differently against %T (-whole +one command):\n%s", args, model, d)
		}
	}
	if narrowed < len(lines)/2 {
		t.Errorf("only %d of %d command lines took the one-command model", narrowed, len(lines))
	}
}

// TestCommandFieldNamesEveryCommand: every top-level command of the whole
// CLI is found by its name, and an unknown name by none.
func TestCommandFieldNamesEveryCommand(t *testing.T) {
	app, err := cliModel()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range app.Node.Children {
		f, ok := commandField(c.Name)
		if !ok || f.Type != c.Target.Type() {
			t.Errorf("command %s: field %v %v", c.Name, f.Name, ok)
		}
	}
	if f, ok := commandField("plna"); ok {
		t.Errorf("plna names %s", f.Name)
	}
}

func TestLeadingCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		ok   bool
	}{
		{[]string{"plan"}, "plan", true},
		{[]string{"--json", "-C", "dir", "plan", "-o", "x"}, "plan", true},
		{[]string{"--lock-timeout=3s", "--debug", "hook", "heartbeat"}, "hook", true},
		{[]string{"-C", "plan", "list"}, "list", true},
		{[]string{"--chdir"}, "", false},
		{[]string{"--version", "plan"}, "", false},
		{[]string{"plan", "--help"}, "", false},
		{[]string{"-h", "plan"}, "", false},
		{[]string{"--json=true", "plan"}, "", false},
		{[]string{"-Cdir", "plan"}, "", false},
		{[]string{"show", "--", "-x"}, "", false},
		{nil, "", false},
	} {
		got, ok := leadingCommand(tc.args)
		if got != tc.want || ok != tc.ok {
			t.Errorf("leadingCommand(%q) = %q, %v; want %q, %v", tc.args, got, ok, tc.want, tc.ok)
		}
	}
}
