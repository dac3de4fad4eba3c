package agents

import (
	"fmt"
	"strings"
)

// codexShape checks, on the decoded file, the shape of every table the
// Codex app runs a script from: [setup] and [cleanup] are tables; their
// script, and each platform override's ([setup.darwin], [setup.linux],
// [setup.win32], the same for cleanup), is a string; an override is a
// table. A darwin or linux override custody co-manages must also hold a
// script that is not blank: without one custody cannot tell whether the
// app runs the base script there or nothing, so it does not guess.
func codexShape(doc map[string]any) error {
	for _, kind := range []string{"setup", "cleanup"} {
		v, ok := doc[kind]
		if !ok {
			continue
		}
		t, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: %s is %s, not a table (the Codex app reads [%s] as a table with a script)", ErrCodexEnvironment, kind, tomlType(v), kind)
		}
		if err := codexScriptShape(kind, t); err != nil {
			return err
		}
		for _, p := range []string{"darwin", "linux", "win32"} {
			name := kind + "." + p
			pv, ok := t[p]
			if !ok {
				continue
			}
			pt, ok := pv.(map[string]any)
			if !ok {
				return fmt.Errorf("%w: %s is %s, not a table (a platform override is a [%s] table with a script)", ErrCodexEnvironment, name, tomlType(pv), name)
			}
			if err := codexScriptShape(name, pt); err != nil {
				return err
			}
			if p == "win32" {
				continue
			}
			if s, _ := pt["script"].(string); strings.TrimSpace(s) == "" {
				return fmt.Errorf("%w: [%s] has no script, or a blank one, so custody cannot tell whether the Codex app runs [%s]'s script on %s or nothing; give [%s] the script to run there, or delete the table", ErrCodexEnvironment, name, kind, p, name)
			}
		}
	}
	return nil
}

// codexScriptShape requires t's script, when it has one, to be a string.
func codexScriptShape(table string, t map[string]any) error {
	s, ok := t["script"]
	if !ok {
		return nil
	}
	if _, ok := s.(string); !ok {
		return fmt.Errorf("%w: %s.script is %s, not a string (the Codex app runs a script written as one TOML string)", ErrCodexEnvironment, table, tomlType(s))
	}
	return nil
}

// tomlType names the TOML type of a decoded value.
func tomlType(v any) string {
	switch v := v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case map[string]any:
		return "a table"
	case []any:
		for _, e := range v {
			if _, ok := e.(map[string]any); !ok {
				return "an array"
			}
		}
		if len(v) > 0 {
			return "an array of tables"
		}
		return "an array"
	default:
		return "a date or time"
	}
}
