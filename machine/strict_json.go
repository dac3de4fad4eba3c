package machine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	json "github.com/custody-sh/custody/machine/bytejson"
)

// decodeStrict reads one JSON document of what (e.g. "plan") into
// a T: at most MaxPlanBytes, known fields only, nothing after it. Every
// failure wraps ErrPlanInvalid and names what is wrong.
func decodeStrict[T any](b []byte, what string) (T, error) {
	var v T
	if len(b) > MaxPlanBytes {
		return v, fmt.Errorf("%w: %d bytes is larger than the %d a plan may have", ErrPlanInvalid, len(b), MaxPlanBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		var zero T
		return zero, fmt.Errorf("%w: not a custody %s (%v)", ErrPlanInvalid, what, err)
	}
	if trailing(dec) {
		var zero T
		return zero, fmt.Errorf("%w: trailing data after the %s", ErrPlanInvalid, what)
	}
	return v, nil
}

// bodyDigest is "sha256:" and the hex digest of v's JSON: the id of a plan
// file, taken over its body with the id field empty.
func bodyDigest(v any, what string) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("machine: " + what + " does not marshal: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// trailing reports whether dec holds anything after the value it decoded,
// even what Decoder.More lets pass (a stray "}" or "]").
func trailing(dec *json.Decoder) bool {
	return !errors.Is(dec.Decode(new(json.RawMessage)), io.EOF)
}
