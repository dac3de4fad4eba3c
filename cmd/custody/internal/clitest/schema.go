package clitest

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// CompileSchema compiles the checked-in schema name with an independent
// validator.
func CompileSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	path := ModuleFile(t, "docs/schemas/"+name)
	s, err := c.Compile(path)
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	return s
}

// ValidateSchema validates one JSON document against schema name.
func ValidateSchema(t *testing.T, name, what string, doc []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", what, err, doc)
	}
	if err := CompileSchema(t, name).Validate(v); err != nil {
		t.Errorf("%s does not validate against docs/schemas/%s: %v\n%s", what, name, err, doc)
	}
}
