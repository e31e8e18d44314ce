/* dns_json.c - stub */
