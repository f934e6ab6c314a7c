package directory

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/lmosdir/lmosdir/td"
)

// Thing is one registration as the store keeps it.
type Thing struct {
	ID string
	// Document is the TD as it is served, without its registration member: the registered
	// bytes with only id (for anonymous TDs) and the discovery context added (td.Prepare).
	Document []byte
	Created  time.Time
	Modified time.Time
	// Expires is zero when the registration does not expire.
	Expires time.Time
	// TTL is the registration's time to live in seconds, 0 when none was given.
	TTL float64
	// Index is what search indexes of the Thing. Stores write it but do not read it back.
	Index *Index
	// Retrieved is when the directory fetched the TD itself (a Thing announced over mDNS);
	// zero for a TD a client registered, whose registration says it was retrieved when it
	// is served.
	Retrieved time.Time
	// Origin is, for a TD the directory fetched itself, a JSON object saying where from
	// (see RetrievalOrigin); nil for a TD a client registered. Stores keep and return the
	// bytes as they are.
	Origin []byte
	// ExpansionProblem says why the stored JSON-LD expansion is incomplete or missing;
	// empty when it is complete or not yet done. Stores read it but only SaveDerived
	// writes it.
	ExpansionProblem string
}

// LiveAt reports whether the registration has not expired at now.
func (t Thing) LiveAt(now time.Time) bool {
	return t.Expires.IsZero() || t.Expires.After(now)
}

// AppendEnriched appends the Enriched TD (WoT Discovery): the stored document with the
// registration information, retrieved at the given time, as its last member. The stored
// bytes are copied, never re-encoded.
func (t Thing) AppendEnriched(dst []byte, retrieved time.Time) []byte {
	return td.AppendMember(dst, t.Document, "registration", t.appendRegistration(nil, retrieved))
}

// Enriched returns the Enriched TD as a new slice.
func (t Thing) Enriched(retrieved time.Time) []byte {
	return t.AppendEnriched(make([]byte, 0, len(t.Document)+192), retrieved)
}

func (t Thing) appendRegistration(dst []byte, retrieved time.Time) []byte {
	dst = append(dst, `{"created":`...)
	dst = appendTime(dst, t.Created)
	dst = append(dst, `,"modified":`...)
	dst = appendTime(dst, t.Modified)
	if !t.Expires.IsZero() {
		dst = append(dst, `,"expires":`...)
		dst = appendTime(dst, t.Expires)
	}
	if t.TTL > 0 {
		dst = append(dst, `,"ttl":`...)
		dst = strconv.AppendFloat(dst, t.TTL, 'f', -1, 64)
	}
	if !t.Retrieved.IsZero() {
		retrieved = t.Retrieved
	}
	dst = append(dst, `,"retrieved":`...)
	dst = appendTime(dst, retrieved)
	if t.Origin != nil {
		dst = append(dst, `,"origin":`...)
		dst = append(dst, t.Origin...)
	}
	if t.ExpansionProblem != "" {
		// Rare, so encoding/json rather than a string writer of our own. A string always
		// encodes.
		reason, _ := json.Marshal(t.ExpansionProblem)
		dst = append(dst, `,"expansion":{"complete":false,"reason":`...)
		dst = append(dst, reason...)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// TimeFormat is how registration times are written: RFC 3339 in UTC with the fraction the
// store keeps (microseconds), trailing zeros dropped.
const TimeFormat = time.RFC3339Nano

func appendTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, TimeFormat)
	return append(dst, '"')
}
