/* event_json.c - stub */
