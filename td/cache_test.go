package td

import (
	"crypto/sha256"
	"fmt"
	"os"
	"testing"
)

func TestVerdictCacheIsBounded(t *testing.T) {
	c := newVerdictCache(4)
	key := func(i int) [sha256.Size]byte { return sha256.Sum256(fmt.Appendf(nil, "%d", i)) }
	for i := range 10 {
		c.add(key(i))
	}
	if len(c.young)+len(c.old) > 8 {
		t.Fatalf("cache holds %d entries, more than two generations of 4", len(c.young)+len(c.old))
	}
	if c.valid(key(0)) {
		t.Error("the oldest entry survived two generations")
	}
	if !c.valid(key(9)) || !c.valid(key(5)) {
		t.Error("recent entries were lost")
	}
	// A hit in the old generation moves the entry to the young one.
	if _, ok := c.young[key(5)]; !ok {
		t.Error("a hit in the old generation was not promoted")
	}
}

func TestCachedVerdictMatchesFreshOne(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	valid := []byte(`{"@context": "https://www.w3.org/2022/wot/td/v1.1", "title": "t", "securityDefinitions": {"n": {"scheme": "nosec"}}, "security": "n"}`)
	for range 2 {
		doc, err := v.Validate(valid)
		if err != nil || doc["title"] != "t" {
			t.Fatalf("valid TD: %v %v", doc, err)
		}
	}
	// A failure is not remembered: it is explained in full every time.
	invalid := []byte(`{"@context": "https://www.w3.org/2022/wot/td/v1.1", "title": "t"}`)
	for range 2 {
		if _, err := v.Validate(invalid); err == nil {
			t.Fatal("invalid TD accepted")
		}
	}
	if v.passed.valid(sha256.Sum256(invalid)) {
		t.Error("an invalid document was cached")
	}
}

func BenchmarkValidateCached(b *testing.B) {
	v, err := NewValidator()
	if err != nil {
		b.Fatal(err)
	}
	doc, err := os.ReadFile("testdata/agent-4k.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := v.Validate(doc); err != nil {
			b.Fatal(err)
		}
	}
}
