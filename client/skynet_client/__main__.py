import sys

from skynet_client.main import main

sys.exit(main())
