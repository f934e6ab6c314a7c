package discovery

import (
	"net"
	"testing"

	"github.com/grandcat/zeroconf"
)

func TestInstanceOfAnEntry(t *testing.T) {
	e := zeroconf.NewServiceEntry(`lmosdir\ on\ lab\0451`, ServiceType, Domain)
	e.Port = 8080
	e.AddrIPv4 = []net.IP{net.IPv4(10, 77, 0, 1)}
	e.Text = []string{"TD=/.well-known/wot", "type=Directory", "td=/ignored", "scheme=https", "flag", "=novalue"}
	i := instanceOf(e)
	if i.Name != "lmosdir on lab-1" {
		t.Errorf("name %q", i.Name)
	}
	if i.TXT["td"] != "/.well-known/wot" || i.TXT["scheme"] != "https" || i.TXT["flag"] != "" || len(i.TXT) != 4 || !i.IsDirectory() {
		t.Errorf("TXT %v", i.TXT)
	}
	if url, err := i.TDURL(); err != nil || url != "https://10.77.0.1:8080/.well-known/wot" {
		t.Errorf("TD URL %q, %v", url, err)
	}
}

func TestTDURL(t *testing.T) {
	v6 := []net.IP{net.ParseIP("fe80::1")}
	cases := []struct {
		instance Instance
		want     string
	}{
		{Instance{Port: 80, IPv6: v6, TXT: map[string]string{"td": "/td"}}, "http://[fe80::1]:80/td"},
		{Instance{Port: 80, IPv4: []net.IP{net.IPv4(192, 168, 1, 2)}, IPv6: v6, TXT: map[string]string{"td": "/td"}}, "http://192.168.1.2:80/td"},
		{Instance{Port: 80, IPv6: v6, TXT: map[string]string{}}, ""},
		{Instance{Port: 80, IPv6: v6, TXT: map[string]string{"td": "td"}}, ""},
		{Instance{Port: 80, IPv6: v6, TXT: map[string]string{"td": "/td", "scheme": "coap"}}, ""},
		{Instance{Port: 80, TXT: map[string]string{"td": "/td"}}, ""},
	}
	for _, c := range cases {
		got, err := c.instance.TDURL()
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("%+v: %q, %v; want %q", c.instance, got, err, c.want)
		}
	}
}
