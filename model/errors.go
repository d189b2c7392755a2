package model

import (
	"errors"
	"fmt"
)

// Code says what kind of failure an Error is; callers branch on it, never on
// message text.
type Code string

const (
	CodeInvalid     Code = "invalid"     // bad input; nothing written
	CodeNotFound    Code = "not_found"   // no such operation (in this tenant)
	CodeConflict    Code = "conflict"    // same key, different arguments
	CodeStale       Code = "stale"       // compare-and-set lost: the row moved on
	CodeIllegal     Code = "illegal"     // transition not allowed from this state
	CodeBusy        Code = "busy"        // the database stayed locked past the deadline
	CodeUnsupported Code = "unsupported" // ledger from a newer schema, not a ledger, …
	CodeUnavailable Code = "unavailable" // file missing, unreadable, read-only
	CodeInternal    Code = "internal"
)

// Error is retrysafe's one error type.
type Error struct {
	Code Code
	Msg  string
	Err  error // wrapped cause, if any
}

func (e *Error) Error() string {
	if e.Err != nil && e.Msg == "" {
		return e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Wrap builds an *Error around cause with a message.
func Wrap(code Code, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// CodeOf returns err's Code, CodeInternal for foreign errors and "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// IsCode reports whether err is an *Error with the given code.
func IsCode(err error, code Code) bool { return err != nil && CodeOf(err) == code }
