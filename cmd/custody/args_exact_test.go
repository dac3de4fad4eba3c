package main

import (
	"reflect"
	"testing"

	"github.com/alecthomas/kong"
)

// TestArgsExact: every argument reaches custody as the exact bytes given.
// A string value is not passed through encoding/json (exactString), and no
// slice is split on a separator, which rebuilds the value rune by rune
// and cuts a path holding a comma.
func TestArgsExact(t *testing.T) {
	t.Parallel()
	parser, err := kong.New(&CLI{}, append(cliOptions(), kong.Vars{"version": "custody"})...)
	if err != nil {
		t.Fatal(err)
	}
	slices := 0
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		values := append([]*kong.Value{}, n.Positional...)
		for _, f := range n.Flags {
			values = append(values, f.Value)
		}
		for _, v := range values {
			if v.Target.Kind() == reflect.Slice {
				slices++
				if v.Tag.Sep != -1 {
					t.Errorf("%s %s is a list split on %q: declare it sep:\"none\"", n.FullPath(), v.Name, v.Tag.Sep)
				}
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(parser.Model.Node)
	if slices < 4 {
		t.Fatalf("found %d list arguments; the walk did not reach the commands", slices)
	}

	for _, tc := range []struct {
		args []string
		get  func(c *CLI) any
		want any
	}{
		{[]string{"adopt", "/tmp/w\xe9x"}, func(c *CLI) any { return c.Adopt.Path }, "/tmp/w\xe9x"},
		{[]string{"adopt", "/tmp/a,b\xff\n"}, func(c *CLI) any { return c.Adopt.Path }, "/tmp/a,b\xff\n"},
		{[]string{"finish", "caf\xe9,x", "r\xe9sum\xe9"}, func(c *CLI) any { return c.Finish.IDs }, []string{"caf\xe9,x", "r\xe9sum\xe9"}},
		{[]string{"apply", "p\xe9.json", "--only", "a,b", "--only", "\xe9"}, func(c *CLI) any { return []any{c.Apply.Plan, c.Apply.Only} }, []any{"p\xe9.json", []string{"a,b", "\xe9"}}},
		{[]string{"-C", "/donn\xe9es", "list"}, func(c *CLI) any { return c.Chdir }, "/donn\xe9es"},
	} {
		var cli CLI
		p, err := kong.New(&cli, append(cliOptions(), kong.Vars{"version": "custody"})...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Parse(tc.args); err != nil {
			t.Errorf("parse %q: %v", tc.args, err)
			continue
		}
		if got := tc.get(&cli); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parse %q = %q, want %q", tc.args, got, tc.want)
		}
	}
}
