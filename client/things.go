package client

import (
	"context"
	"net/http"
	"net/url"
)

const mediaTD = "application/td+json"

// Get returns the Thing Description registered as id, as the directory serves it (with its
// registration information).
func (c *Client) Get(ctx context.Context, id string) ([]byte, error) {
	_, td, err := c.do(ctx, http.MethodGet, c.thingURL(id), http.Header{"Accept": {mediaTD + ", application/json"}}, nil)
	return td, err
}

// Put registers td as id, or replaces the TD registered as id; created tells which.
func (c *Client) Put(ctx context.Context, id string, td []byte) (created bool, err error) {
	status, _, err := c.do(ctx, http.MethodPut, c.thingURL(id), http.Header{"Content-Type": {mediaTD}}, td)
	if err != nil {
		return false, err
	}
	return status == http.StatusCreated, nil
}

// Delete removes the registration of id.
func (c *Client) Delete(ctx context.Context, id string) error {
	_, _, err := c.do(ctx, http.MethodDelete, c.thingURL(id), nil, nil)
	return err
}

// thingURL escapes id as one path segment, so that ids holding '/', '?', '#' or '%' (URNs,
// URLs) arrive as registered.
func (c *Client) thingURL(id string) string {
	return c.base + "/things/" + url.PathEscape(id)
}
