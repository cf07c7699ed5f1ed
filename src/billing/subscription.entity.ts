import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An organization's monthly credit quota. `credits_used` counts the period that began on `period_start`. */
@Entity('subscriptions')
export class Subscription {
  @PrimaryColumn({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ type: 'varchar', length: 50 })
  plan: string;

  @Column({ name: 'monthly_credits', type: 'integer' })
  monthlyCredits: number;

  /** First day (UTC) of the period `credits_used` belongs to; an older one means a fresh quota. */
  @Column({ name: 'period_start', type: 'date' })
  periodStart: string;

  @Column({ name: 'credits_used', type: 'integer' })
  creditsUsed: number;
}
