"""Benchmark entry point: pages/min/core and CER beside OCRmyPDF and bare Tesseract.

The code lives in ``pressroom.bench`` so that ``pressroom bench`` runs the same thing.
"""

from pressroom.bench import main

if __name__ == "__main__":
    main()
