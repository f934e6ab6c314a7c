package lmos

import (
	"fmt"
	"strings"
)

// The rules below are those of W3C Trace Context Level 1, which the protocol
// names for its traceparent and tracestate members.

const (
	traceParentLength        = 55 // 00-<32 hex>-<16 hex>-<2 hex>
	traceParentExample       = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	maxTraceStateMembers     = 32
	maxSimpleKeyLength       = 256
	maxTenantIDLength        = 241
	maxSystemIDLength        = 14
	maxTraceStateValueLength = 256
)

func checkTraceParent(s string) string {
	if len(s) < traceParentLength || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return "must be version-traceid-parentid-flags, e.g. " + traceParentExample
	}
	version, traceID, parentID, flags := s[0:2], s[3:35], s[36:52], s[53:55]
	switch {
	case !isLowerHex(version) || version == "ff":
		return "has an invalid version: two lowercase hexadecimal digits other than ff"
	case version == "00" && len(s) != traceParentLength:
		return "must have exactly 55 characters in version 00"
	// Later versions may append fields, but only after a dash.
	case len(s) > traceParentLength && s[traceParentLength] != '-':
		return "must be version-traceid-parentid-flags, e.g. " + traceParentExample
	case !isLowerHex(traceID) || isAllZeros(traceID):
		return "must have a trace-id of 32 lowercase hexadecimal digits, not all zero"
	case !isLowerHex(parentID) || isAllZeros(parentID):
		return "must have a parent-id of 16 lowercase hexadecimal digits, not all zero"
	case !isLowerHex(flags):
		return "must have trace-flags of 2 lowercase hexadecimal digits"
	}
	return ""
}

func checkTraceState(s string) string {
	keys := map[string]bool{}
	for member := range strings.SplitSeq(s, ",") {
		// Empty and blank list members are allowed and carry nothing.
		member = strings.Trim(member, " \t")
		if member == "" {
			continue
		}
		if problem := checkTraceStateMember(member, keys); problem != "" {
			return problem
		}
	}
	switch {
	case len(keys) == 0:
		return "must contain at least one key=value list member"
	case len(keys) > maxTraceStateMembers:
		return fmt.Sprintf("must not contain more than %d list members", maxTraceStateMembers)
	}
	return ""
}

// checkTraceStateMember checks one key=value member and records its key in
// keys, since a key may appear only once.
func checkTraceStateMember(member string, keys map[string]bool) string {
	key, value, found := strings.Cut(member, "=")
	switch {
	case !found:
		return fmt.Sprintf("list member %q must be key=value", member)
	case !isTraceStateKey(key):
		return fmt.Sprintf("key %q must be lowercase letters, digits and _-*/, optionally tenant@system", key)
	case !isTraceStateValue(value):
		return fmt.Sprintf("value of key %q must be 1 to 256 printable ASCII characters other than , and =, not ending in a space", key)
	case keys[key]:
		return fmt.Sprintf("key %q appears more than once", key)
	}
	keys[key] = true
	return ""
}

func isTraceStateKey(key string) bool {
	tenant, system, multiTenant := strings.Cut(key, "@")
	if !multiTenant {
		return isLowerAlpha(key, 0) && hasKeyCharacters(key, maxSimpleKeyLength)
	}
	return (isLowerAlpha(tenant, 0) || isDigit(tenant, 0)) && hasKeyCharacters(tenant, maxTenantIDLength) &&
		isLowerAlpha(system, 0) && hasKeyCharacters(system, maxSystemIDLength)
}

// hasKeyCharacters reports whether s is 1 to maxLength characters of the key
// repertoire; the first character has stricter rules checked by the caller.
func hasKeyCharacters(s string, maxLength int) bool {
	if s == "" || len(s) > maxLength {
		return false
	}
	for i := range len(s) {
		if !isLowerAlpha(s, i) && !isDigit(s, i) && strings.IndexByte("_-*/", s[i]) < 0 {
			return false
		}
	}
	return true
}

func isTraceStateValue(value string) bool {
	if value == "" || len(value) > maxTraceStateValueLength || value[len(value)-1] == ' ' {
		return false
	}
	for i := range len(value) {
		if c := value[i]; c < 0x20 || c > 0x7e || c == ',' || c == '=' {
			return false
		}
	}
	return true
}

func isLowerHex(s string) bool {
	for i := range len(s) {
		if !isDigit(s, i) && (s[i] < 'a' || s[i] > 'f') {
			return false
		}
	}
	return true
}

func isAllZeros(s string) bool {
	return strings.Trim(s, "0") == ""
}

func isLowerAlpha(s string, i int) bool {
	return i < len(s) && 'a' <= s[i] && s[i] <= 'z'
}

func isDigit(s string, i int) bool {
	return i < len(s) && '0' <= s[i] && s[i] <= '9'
}
