// Package pathquery evaluates RFC 9535 JSONPath queries for the WoT Discovery endpoint
// /search/jsonpath, whose root is the array of all TDs in id order, without holding that
// array in memory.
//
// Results are those of github.com/theory/jsonpath run on the whole array: a query is split
// into passes over the TDs (see Pass), each TD is evaluated on its own, and filters on the
// TDs themselves yield a Condition a store can turn into an index-backed pre-filter. Only
// queries whose filters refer to the root $ need all TDs at once. The library's match() and
// search() panic on a missing argument; Compile swaps in RFC-conforming versions, and a
// panic that still escapes makes its TD contribute nothing instead of failing the request.
package pathquery
