"""Amazon Mechanical Turk: client (the only boto3 import), questions, config, provider, sync, views, urls."""
