// Package jsonld expands Thing Descriptions to JSON-LD expanded form with
// github.com/piprate/json-gold, without ever reaching the network unless the
// operator allowed a URL.
//
// # Where contexts come from
//
// A context URL in a TD's @context is looked up, by exact string, in three
// places; any other URL fails with a *ContextError that says so.
//
// First, the bundled W3C contexts (contexts/, license in contexts/NOTICE.md):
// https://www.w3.org/2022/wot/td/v1.1 and https://www.w3.org/2019/wot/td/v1
// (both the TD 1.1 context, as the W3C serves them today),
// https://www.w3.org/2022/wot/discovery and its older name
// https://w3c.github.io/wot-discovery/context/discovery-context.jsonld, and
// https://www.w3.org/2022/wot/discovery-did. Variants with a trailing slash, a
// ".jsonld" suffix or plain http are different URLs and are not served: a TD
// that writes them would not be understood by other processors either.
//
// Second, the operator's context folder (LoaderOptions.Dir), described by
// <Dir>/index.json, a JSON object mapping each URL to a file name in Dir:
//
//	{
//	  "https://example.com/contexts/ev-charger": "ev-charger.jsonld",
//	  "urn:example:context:lab": "lab.jsonld"
//	}
//
// Each URL must be absolute and must not be a bundled one; each file name must
// end in ".jsonld" and name a file directly in Dir, holding a JSON object with
// an "@context" member. Everything is read and checked by NewLoader, so a
// broken folder stops start-up instead of failing TDs one by one later, and
// edits take effect at the next start.
//
// Third, the allow-list (LoaderOptions.AllowRemote): http(s) URLs fetched on
// first use and then kept in memory for the life of the process. A failed
// fetch is remembered for a minute, so a dead server costs one timeout per
// minute rather than one per registration.
//
// # What json-gold does with TDs
//
// Processing mode is json-ld-1.1: the TD 1.1 context declares "@version": 1.1
// and json-gold refuses it in 1.0 mode. Under 1.1 a term is usable as the
// prefix of a compact IRI only if its IRI ends in a URI gen-delim such as "/"
// or "#" (or the term sets "@prefix": true). The LMOS namespace
// https://eclipse.dev/lmos/protocol/v1 does not, so with the usual inline
// context {"lmos": "https://eclipse.dev/lmos/protocol/v1"} the value
// "lmos:Agent" is read as an absolute IRI with the scheme "lmos:" and stays
// "lmos:Agent" after expansion; so do keys such as "lmos:metadata". With
// "@prefix": true it would become https://eclipse.dev/lmos/protocol/v1Agent,
// with no separator. Match LMOS kinds on the compact strings.
//
// Numbers are decoded as float64, as json-gold expects, so integers beyond
// 2^53 lose precision in the expanded form; the registered bytes keep them.
package jsonld
