package directory

import (
	"errors"
	"fmt"
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
