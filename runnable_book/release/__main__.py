import sys

from runnable_book.release.release import main

sys.exit(main())
