"""What Slack sends the app, as builders in Slack's shapes: Events API inner events and their
deliveries, App Home and panel events, and the requests strangers send to its port."""
