import { IntegerField } from '../../common/validation.js';

export class SetMonthlyCreditsDto {
  @IntegerField({ min: 0, max: 1_000_000_000, optional: false })
  monthly_credits: number;
}
