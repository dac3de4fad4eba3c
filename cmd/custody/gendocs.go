package main

//go:generate go test -run TestCLIDocsFresh -update-cli-docs

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/alecthomas/kong"
)

// cliDescription is custody's one-line description: --help shows it, and
// every document generated from the model starts with it.
const cliDescription = "custody keeps git worktrees safe: nothing you wrote is ever lost."

// cliOptions are the kong options that shape custody's model. run and
// every generator (docs, skill, completion, man page) build it with them,
// so what is documented is what parses.
func cliOptions() []kong.Option {
	return []kong.Option{kong.Name("custody"), kong.Description(cliDescription), kong.KindMapper(reflect.String, exactString), kong.ExplicitGroups(commandGroups())}
}

// cliModel builds the kong model of a fresh CLI.
func cliModel() (*kong.Application, error) {
	parser, err := kong.New(&CLI{}, append(cliOptions(), kong.Vars{"version": "custody"})...)
	if err != nil {
		return nil, fmt.Errorf("internal: building the command line model: %w", err)
	}
	return parser.Model, nil
}

// cliDoc is the command line as every generator renders it: read once
// from the kong model, hidden commands and flags left out, commands and
// flags sorted by name so the output never depends on declaration order.
type cliDoc struct {
	Name        string
	Description string
	// Globals are the flags every command takes (the root's).
	Globals []flagDoc
	// Commands are the top-level commands; groups hold their children.
	Commands []cmdDoc
}

// cmdDoc is one command or command group.
type cmdDoc struct {
	// Path is the command's words after the binary: "archive create".
	Path   string
	Name   string
	Help   string
	Detail string
	Args   []argDoc
	// Flags are the command's own flags, the globals excluded.
	Flags    []flagDoc
	Children []cmdDoc
}

// flagDoc is one flag.
type flagDoc struct {
	Name        string
	Short       rune
	Placeholder string
	Help        string
	Default     string
	Enum        []string
	// Bool flags take no value; Negatable ones also have --no-NAME.
	Bool      bool
	Negatable bool
	Repeated  bool
	Required  bool
	// Complete is the kind of words completion asks the binary for
	// (the flag's complete tag: trees, records, branches, archives).
	Complete string
}

// argDoc is one positional argument.
type argDoc struct {
	Name     string
	Help     string
	Enum     []string
	Required bool
	Repeated bool
	// Complete is the kind of words completion asks the binary for
	// (the argument's complete tag).
	Complete string
}

// describeCLI reads app into a cliDoc.
func describeCLI(app *kong.Application) cliDoc {
	d := cliDoc{Name: app.Name, Description: app.Help}
	for _, f := range app.Flags {
		if !f.Hidden {
			d.Globals = append(d.Globals, describeFlag(f))
		}
	}
	sortFlags(d.Globals)
	d.Commands = describeChildren(app.Node, nil)
	return d
}

// describeChildren describes n's visible command children, sorted.
func describeChildren(n *kong.Node, words []string) []cmdDoc {
	var out []cmdDoc
	for _, c := range n.Children {
		if c.Type != kong.CommandNode || c.Hidden {
			continue
		}
		path := append(slices.Clip(words), c.Name)
		cd := cmdDoc{Path: strings.Join(path, " "), Name: c.Name, Help: c.Help, Detail: longHelp(c)}
		for _, p := range c.Positional {
			cd.Args = append(cd.Args, argDoc{Name: p.Name, Help: p.Help, Enum: enumOf(p), Required: p.Required, Repeated: p.IsSlice() || p.IsCumulative(), Complete: completeTag(p)})
		}
		for _, f := range c.Flags {
			if !f.Hidden {
				cd.Flags = append(cd.Flags, describeFlag(f))
			}
		}
		sortFlags(cd.Flags)
		cd.Children = describeChildren(c, path)
		out = append(out, cd)
	}
	slices.SortFunc(out, func(a, b cmdDoc) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// longHelp is the command's long help: its Help() method, else the
// model's detail.
func longHelp(n *kong.Node) string {
	if n.Target.IsValid() {
		for _, v := range []reflect.Value{n.Target, addr(n.Target)} {
			if v.IsValid() && v.CanInterface() {
				if hp, ok := v.Interface().(kong.HelpProvider); ok {
					return strings.TrimSpace(hp.Help())
				}
			}
		}
	}
	return strings.TrimSpace(n.Detail)
}

// addr is v's address when it has one.
func addr(v reflect.Value) reflect.Value {
	if v.CanAddr() {
		return v.Addr()
	}
	return reflect.Value{}
}

func describeFlag(f *kong.Flag) flagDoc {
	fd := flagDoc{Name: f.Name, Short: f.Short, Help: f.Help, Enum: enumOf(f.Value),
		Bool: f.IsBool() || f.IsCounter(), Negatable: f.Negated, Repeated: f.IsSlice() || f.IsCumulative() && !f.IsBool(), Required: f.Required,
		Complete: completeTag(f.Value)}
	if !fd.Bool {
		fd.Placeholder = f.PlaceHolder
		if fd.Placeholder == "" {
			fd.Placeholder = strings.ToUpper(f.Name)
			if f.Target.IsValid() && f.Target.Type() == reflect.TypeFor[time.Duration]() {
				fd.Placeholder = "DURATION"
			}
		}
		if f.HasDefault {
			fd.Default = f.Default
		}
	}
	return fd
}

// completeTag is v's complete tag: the kind of words shell completion asks
// the binary for (custody __complete KIND), "" when it has none.
func completeTag(v *kong.Value) string {
	if v.Tag == nil {
		return ""
	}
	return v.Tag.Get("complete")
}

// enumOf is v's enum values, sorted; nil when it has none.
func enumOf(v *kong.Value) []string {
	if v.Enum == "" {
		return nil
	}
	e := v.EnumSlice()
	slices.Sort(e)
	return e
}

func sortFlags(fs []flagDoc) {
	slices.SortFunc(fs, func(a, b flagDoc) int { return strings.Compare(a.Name, b.Name) })
}

// leaves is every runnable command below cmds, depth first, in order.
func leaves(cmds []cmdDoc) []cmdDoc {
	var out []cmdDoc
	for _, c := range cmds {
		if len(c.Children) == 0 {
			out = append(out, c)
			continue
		}
		out = append(out, leaves(c.Children)...)
	}
	return out
}

// all is every command and group below cmds, depth first, in order.
func all(cmds []cmdDoc) []cmdDoc {
	var out []cmdDoc
	for _, c := range cmds {
		out = append(out, c)
		out = append(out, all(c.Children)...)
	}
	return out
}

// Usage is the command's synopsis: "custody archive create <id> [flags]".
func (c cmdDoc) Usage(bin string) string {
	words := []string{bin, c.Path}
	if len(c.Children) > 0 {
		words = append(words, "<command>")
	}
	for _, a := range c.Args {
		w := "<" + a.Name + ">"
		if a.Repeated {
			w += " ..."
		}
		if !a.Required {
			w = "[" + w + "]"
		}
		words = append(words, w)
	}
	if len(c.Flags) > 0 {
		words = append(words, "[flags]")
	}
	return strings.Join(words, " ")
}

// Spelling is how the flag is written: "-o, --out=FILE".
func (f flagDoc) Spelling() string {
	s := "--" + f.Name
	if f.Negatable {
		s = "--[no-]" + f.Name
	}
	if !f.Bool {
		s += "=" + f.Placeholder
	}
	if f.Short != 0 {
		s = "-" + string(f.Short) + ", " + s
	}
	return s
}

// Takes reports whether the flag takes a value.
func (f flagDoc) Takes() bool { return !f.Bool }

// generatedNote is what every generated file says on one of its first
// lines, with how to make it again.
const generatedNote = "generated — do not edit"

// wholeCLI describes every command of the command line, whichever one was
// parsed (run parses against the one it names, commandModel): man,
// completion and skill print all of them.
func wholeCLI() (cliDoc, error) {
	app, err := cliModel()
	if err != nil {
		return cliDoc{}, err
	}
	return describeCLI(app), nil
}
