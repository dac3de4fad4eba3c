package main

import (
	"fmt"
	"reflect"

	"github.com/alecthomas/kong"
)

// exactString reads a string argument or flag value as its exact bytes.
// kong's own string mapper passes the value through encoding/json, which
// turns every byte that is not UTF-8 into U+FFFD: a path such as
// "w\xe9x" named a directory that does not exist. Every slice argument
// and flag is declared sep:"none" (TestArgsExact): kong's splitting on a
// separator rebuilds the value rune by rune, with the same loss, and would
// cut a path holding a comma in two.
var exactString kong.MapperFunc = func(ctx *kong.DecodeContext, target reflect.Value) error {
	t, err := ctx.Scan.PopValue("string")
	if err != nil {
		return err
	}
	s, ok := t.Value.(string)
	if !ok {
		s = fmt.Sprint(t.Value)
	}
	target.SetString(s)
	return nil
}
