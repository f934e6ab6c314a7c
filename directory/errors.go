package directory

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

var (
	// ErrNotFound means no live Thing has the ID.
	ErrNotFound = errors.New("thing not found")
	// ErrExists means a live Thing already has the ID.
	ErrExists = errors.New("thing already exists")
)

// RequestError is a request the directory refuses for a reason the client can fix other
// than TD validity (those are *td.ValidationError and *td.SyntaxError).
type RequestError struct {
	Detail string
	// Field is the JSON path of the member at fault, if any.
	Field string
}

func (e *RequestError) Error() string { return e.Detail }

func invalidf(field, format string, args ...any) error {
	return &RequestError{Field: field, Detail: fmt.Sprintf(format, args...)}
}

// StorableID reports whether every store can keep id: UTF-8 text without NUL. PostgreSQL's
// text cannot hold anything else, and the embedded store follows the same rule so that
// what a client may register does not depend on the store.
func StorableID(id string) bool {
	return utf8.ValidString(id) && !strings.ContainsRune(id, 0)
}

// UnstorableIDError is the error for an id that StorableID refuses.
func UnstorableIDError(id string) error {
	return invalidf("$.id", "the id %q cannot be stored: it must be UTF-8 text without NUL characters", id)
}
